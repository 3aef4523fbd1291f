//! `endless` cases: inputs that never end or are far too big — a config or a CSV input or
//! data file that is `/dev/zero`, a FIFO nobody writes to, a FIFO held open and never
//! closed, or a 64 GiB sparse file. The run must refuse with a clear error within the time
//! limit and the memory cap.

use super::cases::{ConfigArg, Family, Gen, Subcommand};
use super::doc::{Seg, V, key};

impl Gen {
    pub(super) fn endless_case(&mut self) {
        let source = self.pick(&[
            ConfigArg::DevZero,
            ConfigArg::Fifo,
            ConfigArg::HeldFifo,
            ConfigArg::Sparse,
        ]);
        let as_config = self.family == Family::Contact || self.rng_bool(0.5);
        let name = match source {
            ConfigArg::DevZero => "/dev/zero".to_string(),
            ConfigArg::Sparse => "huge.csv".to_string(),
            _ => "stream.csv".to_string(),
        };
        if as_config {
            self.case.config_arg = source;
            self.note("endless", format!("the config is {source:?}"));
        } else {
            if source != ConfigArg::DevZero {
                self.case.special_files.push((name.clone(), source));
            }
            let place = if self.case.command == Subcommand::Simulate {
                let signal = V::tab(vec![("kind", V::str("csv")), ("path", V::str(&name))]);
                match self.doc.get_key("input") {
                    Some(V::Arr(items)) if !items.is_empty() => {
                        self.doc.set(&[key("input"), Seg::Idx(0)], signal);
                    }
                    _ => self.doc.set_key("input", V::Arr(vec![signal])),
                }
                "input[0].path"
            } else {
                // Outputs from the file: no reference model, no cross-validation inputs.
                self.doc.remove(&[key("data"), key("reference")]);
                self.doc.remove_key("test_input");
                self.doc.remove_key("test_data");
                self.doc.set(&[key("data"), key("file")], V::str(&name));
                "data.file"
            };
            self.note("endless", format!("{place} = {name} ({source:?})"));
        }
        self.case.must_refuse = true;
        self.case.large = false;
    }

    fn rng_bool(&mut self, p: f64) -> bool {
        use rand::Rng;
        self.rng.random_bool(p)
    }
}
