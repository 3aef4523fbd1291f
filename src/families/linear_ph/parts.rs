//! Which of the parameter parts w = (J, R, Q, B, x0) a setting applies to: the parts an
//! identification fits, the parts a regularisation penalises.

use crate::error::{Error, Result};

/// The names of the parts, in the order J, R, Q, B, x0.
pub const PART_NAMES: [&str; 5] = ["J", "R", "Q", "B", "x0"];

/// A subset of (J, R, Q, B, x0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    pub j: bool,
    pub r: bool,
    pub q: bool,
    pub b: bool,
    pub x0: bool,
}

impl Parts {
    pub const ALL: Parts = Parts {
        j: true,
        r: true,
        q: true,
        b: true,
        x0: true,
    };
    pub const NONE: Parts = Parts {
        j: false,
        r: false,
        q: false,
        b: false,
        x0: false,
    };

    /// The parts named in `names` (each one of J, R, Q, B, x0, at most once); `field`
    /// names the setting in errors.
    pub fn parse(field: &str, names: &[String]) -> Result<Parts> {
        let mut parts = Parts::NONE;
        for name in names {
            let slot = match name.as_str() {
                "J" => &mut parts.j,
                "R" => &mut parts.r,
                "Q" => &mut parts.q,
                "B" => &mut parts.b,
                "x0" => &mut parts.x0,
                other => {
                    return Err(Error::invalid(
                        field,
                        format!("unknown part {other:?}; the parts are J, R, Q, B and x0"),
                    ));
                }
            };
            if *slot {
                return Err(Error::invalid(field, format!("names {name} twice")));
            }
            *slot = true;
        }
        Ok(parts)
    }

    /// The flags in the order J, R, Q, B, x0.
    pub fn flags(&self) -> [bool; 5] {
        [self.j, self.r, self.q, self.b, self.x0]
    }

    /// The names of the parts in the set, in the order J, R, Q, B, x0.
    pub fn names(&self) -> Vec<&'static str> {
        PART_NAMES
            .iter()
            .zip(self.flags())
            .filter_map(|(name, on)| on.then_some(*name))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.flags().iter().all(|on| !on)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_refuses_unknown_or_repeated_ones() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let parts = Parts::parse("fit", &names(&["J", "B", "x0"])).unwrap();
        assert_eq!(parts.names(), vec!["J", "B", "x0"]);
        assert!(Parts::parse("fit", &names(&["K"])).is_err());
        assert!(Parts::parse("fit", &names(&["J", "J"])).is_err());
        assert!(Parts::parse("fit", &[]).unwrap().is_empty());
    }
}
