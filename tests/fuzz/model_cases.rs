//! Cases from the gradient and identify examples: bounded to a small problem (few steps, few
//! candidates and iterations), then one class of mutation, among them `dimension`: a model
//! dimension or a count set to 10³ … 2⁶³ − 1.

use rand::Rng;

use super::cases::{Class, Gen, Subcommand};
use super::doc::{Seg, V, key};

/// The values a dimension or count is set to: moderate, around 2³¹ and 2³², and the largest
/// TOML integer.
const DIMENSIONS: [i64; 10] = [
    1_000,
    100_000,
    (1 << 31) - 1,
    1 << 31,
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + 1,
    1 << 40,
    (1 << 53) + 1,
    i64::MAX,
];

/// What a field sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sizes {
    /// The state dimension n of a model (n × n matrices): beyond the machine's memory it
    /// must be refused.
    States,
    /// A mass–spring–damper chain of this many cells (n = 2 cells).
    Cells,
    /// The rank r of R = L Lᵀ, L ∈ ℝ^{n×r}: beyond the machine's memory for one column of
    /// L it must be refused.
    Rank,
    /// A number of evaluations, each at least one step of work: finishing 2³¹ of them
    /// within the time limit is impossible.
    Evaluations,
    /// A count that may legitimately end early (iterations, windows, checkpoints).
    Bound,
}

impl Gen {
    /// A case of a gradient or identify example (`self.case.command`).
    pub(super) fn model_case(&mut self) {
        self.bound_model();
        let class = self.weighted(&[
            (Class::Valid, 3),
            (Class::Tree, 6),
            (Class::Text, 2),
            (Class::Set, 3),
            (Class::Out, 1),
            (Class::Endless, 1),
            (Class::Dimension, 3),
        ]);
        self.case.class = class;
        match class {
            Class::Valid => self.note("valid", "bounded example".into()),
            Class::Tree => {
                let n = self.weighted(&[(1, 6), (2, 3)]);
                for _ in 0..n {
                    self.tree_mutation();
                }
            }
            Class::Text => self.text_mutation(),
            Class::Set => self.set_mutation(),
            Class::Out => self.out_case(),
            Class::Endless => self.endless_case(),
            _ => self.dimension_case(),
        }
        if class != Class::Text {
            self.case.config = super::doc::write_document(&self.doc).into_bytes();
        }
    }

    /// Few steps (≤ 200), candidates (≤ 16, best ≤ 2 kept), iterations (≤ 5), batch members
    /// (≤ 8), and a fitted order ≤ 6 where no fixed part pins it.
    fn bound_model(&mut self) {
        let h = self.h();
        let steps = self.log_int(1, 200);
        self.set_steps(h, steps);
        let put = |g: &mut Gen, section: &str, name: &str, hi: u64| {
            if g.doc.get(&[key(section), key(name)]).is_some() {
                let v = g.log_int(1, hi);
                g.doc.set(&[key(section), key(name)], V::Int(v as i64));
            }
        };
        put(self, "candidates", "members", 8);
        if self.case.command == Subcommand::Identify {
            let candidates = self.log_int(1, 16);
            let keep = self.log_int(1, candidates.min(2));
            let iterations = self.log_int(1, 5);
            for (name, v) in [("candidates", candidates), ("keep", keep)] {
                self.doc
                    .set(&[key("monte_carlo"), key(name)], V::Int(v as i64));
            }
            self.doc.set(
                &[key("optimizer"), key("max_iterations")],
                V::Int(iterations as i64),
            );
            // Given matrices, and initial guesses, fix the order.
            let pinned = ["J", "R", "Q", "B", "x0", "dissipation_rank"]
                .iter()
                .any(|k| self.doc.get(&[key("model"), key(k)]).is_some())
                || self.doc.get(&[key("initial_guess")]).is_some();
            if !pinned {
                let order = self.log_int(1, 6);
                self.doc
                    .set(&[key("model"), key("order")], V::Int(order as i64));
            }
        }
    }

    /// One model dimension or count set to one of [`DIMENSIONS`] (in the file or by
    /// `--set`); a refusal must name it.
    fn dimension_case(&mut self) {
        let reference_kind = self
            .doc
            .get(&[key("data"), key("reference"), key("kind")])
            .cloned();
        let mut fields: Vec<(Vec<Seg>, Sizes)> = vec![(
            vec![key("scheme"), key("t_end")],
            Sizes::Evaluations, // the step count, t_end / h
        )];
        match reference_kind {
            Some(V::Str(k)) if k == "random" => {
                fields.push((
                    vec![key("data"), key("reference"), key("states")],
                    Sizes::States,
                ));
            }
            Some(V::Str(k)) if k == "msd-chain" => {
                fields.push((
                    vec![key("data"), key("reference"), key("cells")],
                    Sizes::Cells,
                ));
            }
            _ => {}
        }
        if self.case.command == Subcommand::Gradient {
            fields.push((vec![key("candidate"), key("states")], Sizes::States));
            fields.push((vec![key("candidates"), key("members")], Sizes::Evaluations));
            fields.push((vec![key("gradient"), key("checkpoint_every")], Sizes::Bound));
        } else {
            fields.push((vec![key("model"), key("order")], Sizes::States));
            fields.push((vec![key("model"), key("dissipation_rank")], Sizes::Rank));
            fields.push((
                vec![key("monte_carlo"), key("candidates")],
                Sizes::Evaluations,
            ));
            fields.push((vec![key("monte_carlo"), key("keep")], Sizes::Bound));
            fields.push((vec![key("optimizer"), key("max_iterations")], Sizes::Bound));
            fields.push((vec![key("optimizer"), key("trials")], Sizes::Bound));
            fields.push((vec![key("optimizer"), key("stall_window")], Sizes::Bound));
            fields.push((vec![key("optimizer"), key("prune_every")], Sizes::Bound));
        }
        let (path, sizes) = self.pick(&fields);
        let value = self.pick(&DIMENSIONS);
        let field = super::doc::display(&path);
        let mut named = vec![field.clone()];
        let written = if sizes == Sizes::Evaluations && path.last() == Some(&key("t_end")) {
            // The step count: t_end = N h.
            named.push("scheme.h".into());
            named.push("scheme".into());
            V::Float(self.h() * value as f64)
        } else {
            V::Int(value)
        };
        let via_set = self.rng.random_bool(0.3);
        if via_set {
            self.set_value(&path, written.clone());
        } else {
            self.doc.set(&path, written.clone());
        }
        let n = value as f64;
        let bytes = match sizes {
            Sizes::States => 8.0 * n * n,
            Sizes::Cells => 32.0 * n * n,
            Sizes::Rank => 8.0 * n,
            _ => 0.0,
        };
        let machine = super::run::machine_bytes() as f64;
        self.case.must_refuse = bytes > machine.max(1.0);
        self.case.exit0_impossible = sizes == Sizes::Evaluations && value >= (1 << 31) - 1;
        self.case.large = true;
        self.case.names_field = named;
        self.note(
            "dimension",
            format!(
                "{field} = {}{}",
                super::doc::inline_text(&written),
                if via_set { " (by --set)" } else { "" }
            ),
        );
    }
}
