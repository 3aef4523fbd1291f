//! `narrowing` cases: user values just around 2³¹, 2³² and u32::MAX ± 1 that a kernel
//! parameter of 32 bits would silently truncate — `output.every`, the step count (h and
//! t_end) and `ensemble.members` — on `--backend cpu` and `gpu`. A run that finishes must
//! equal the `--backend reference` run of the same config (`output.every`), or cannot have
//! finished within the limit at all (2³¹ steps or members), so finishing means truncation.

use super::cases::Gen;
use super::doc::{V, key};

/// Values a 32-bit parameter cannot hold, or only just.
const AROUND_32_BITS: [i64; 10] = [
    (1 << 31) - 1,
    1 << 31,
    (1 << 31) + 1,
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + 1,
    (1 << 32) + 7,
    1 << 33,
    (1 << 53) + 1,
    i64::MAX,
];

impl Gen {
    pub(super) fn narrowing_case(&mut self) {
        let value = self.pick(&AROUND_32_BITS);
        let has_ensemble = self.doc.get_key("ensemble").is_some();
        let what = if self.case.gpu {
            self.weighted(&[("every", 6), ("steps", 1), ("members", 1)])
        } else {
            self.weighted(&[("every", 3), ("steps", 2), ("members", 2)])
        };
        let what = if what == "members" && !has_ensemble {
            "every"
        } else {
            what
        };
        let text = match what {
            "every" => {
                // The bounded run is short: every ≥ 2³¹ − 1 records only the ends.
                self.doc.set(&[key("output"), key("every")], V::Int(value));
                self.case.reference_check = true;
                format!("output.every = {value}")
            }
            "steps" => {
                let h = self.h();
                self.set_steps(h, value as u64);
                self.doc.set(&[key("output"), key("every")], V::Int(value));
                self.case.exit0_impossible = true;
                self.case.large = true;
                format!(
                    "{value} steps (t_end = {:e}, h = {h:e}), output.every = {value}",
                    h * value as f64
                )
            }
            _ => {
                self.doc
                    .set(&[key("ensemble"), key("members")], V::Int(value));
                self.case.exit0_impossible = true;
                self.case.large = true;
                format!("ensemble.members = {value}")
            }
        };
        self.note("narrowing", text);
    }
}
