//! The time dependence of a contact system: which scalar functions of t it goes through
//! (forcing signals, the damping's c(t), the spin–orbit orbit terms, and t itself for a
//! potential expression in t), in the order a shared stream carries them, and their values.

use super::model::{Damping, Potential};

/// Which scalar functions of t a system's time dependence goes through, in stream order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeChannels {
    /// One per forcing term (the tidal forcing last, when present).
    pub forcings: usize,
    /// c(t) of C(t) = α c(t).
    pub damping: bool,
    /// (a/r)³ cos 2f and (a/r)³ sin 2f of the spin–orbit term.
    pub spin_orbit: bool,
    /// t itself, for a potential expression B(t, x) that uses t.
    pub time: bool,
}

impl TimeChannels {
    /// The channels of a system with `potential` and `damping`.
    pub fn of(potential: &[Potential], damping: &Damping) -> Self {
        let forcings = potential
            .iter()
            .filter(|t| matches!(t, Potential::Forcing { .. }))
            .count()
            + usize::from(matches!(damping, Damping::Tidal { .. }));
        TimeChannels {
            forcings,
            damping: !matches!(damping, Damping::None),
            spin_orbit: potential
                .iter()
                .any(|t| matches!(t, Potential::SpinOrbit { .. })),
            time: uses_time(potential),
        }
    }

    /// Total channel count.
    pub fn count(&self) -> usize {
        self.forcings
            + usize::from(self.damping)
            + 2 * usize::from(self.spin_orbit)
            + usize::from(self.time)
    }

    /// The channel of c(t) (when `damping`).
    pub fn damping_channel(&self) -> usize {
        self.forcings
    }

    /// The first of the two spin–orbit channels (when `spin_orbit`).
    pub fn spin_orbit_channel(&self) -> usize {
        self.forcings + usize::from(self.damping)
    }

    /// The channel of t (when `time`).
    pub fn time_channel(&self) -> usize {
        self.spin_orbit_channel() + 2 * usize::from(self.spin_orbit)
    }
}

/// Whether a potential expression among `potential` uses t.
fn uses_time(potential: &[Potential]) -> bool {
    potential
        .iter()
        .any(|term| matches!(term, Potential::Expression(e) if e.uses_time()))
}

/// The time-dependent terms of a contact system (see
/// [`ContactSystem::time_terms`](super::model::ContactSystem::time_terms)).
#[derive(Debug, Clone)]
pub struct TimeTerms {
    potential: Vec<Potential>,
    damping: Damping,
}

impl TimeTerms {
    /// The time-dependent terms among `potential` and `damping`, owned.
    pub fn of(potential: &[Potential], damping: &Damping) -> Self {
        TimeTerms {
            potential: potential
                .iter()
                .filter(|term| {
                    matches!(
                        term,
                        Potential::Forcing { .. }
                            | Potential::SpinOrbit { .. }
                            | Potential::Expression(_)
                    )
                })
                .cloned()
                .collect(),
            damping: damping.clone(),
        }
    }

    /// [`ContactSystem::time_functions`](super::model::ContactSystem::time_functions) of the system
    /// these terms came from.
    pub fn time_functions(&self, t: f64, out: &mut [f64]) {
        time_functions(&self.potential, &self.damping, t, out);
    }
}

/// The time functions of `potential` and `damping` at t (see
/// [`ContactSystem::time_functions`]); terms without time dependence contribute nothing.
pub(super) fn time_functions(potential: &[Potential], damping: &Damping, t: f64, out: &mut [f64]) {
    let mut values = out.iter_mut();
    let mut push = |v: f64| *values.next().expect("one slot per time channel") = v;
    for term in potential {
        if let Potential::Forcing { signal, .. } = term {
            push(signal.value(t));
        }
    }
    if let Damping::Tidal { orbit, .. } = damping {
        push(orbit.radius(t).recip().powi(6) * orbit.true_anomaly_rate(t));
    }
    match damping {
        Damping::None => {}
        Damping::Constant { .. } => push(1.0),
        Damping::Signal { signal, .. } => push(signal.value(t)),
        Damping::Tidal { orbit, .. } => push(orbit.radius(t).recip().powi(6)),
        Damping::Expression(e) => push(e.rate(t)),
    }
    for term in potential {
        if let Potential::SpinOrbit { orbit, .. } = term {
            let cube = orbit.radius(t).recip().powi(3);
            let two_f = 2.0 * orbit.true_anomaly(t);
            push(cube * two_f.cos());
            push(cube * two_f.sin());
        }
    }
    if uses_time(potential) {
        push(t);
    }
}

/// What each channel of [`time_functions`] holds, in stream order, as (the config field it
/// comes from, what it is), for errors; `prefix` names the system (`system`).
pub(super) fn channel_names(
    potential: &[Potential],
    damping: &Damping,
    prefix: &str,
) -> Vec<(String, String)> {
    let mut names = Vec::new();
    let term = |index: usize, name: &str| format!("{prefix}.potential[{index}]{name}");
    for (index, t) in potential.iter().enumerate() {
        if let Potential::Forcing { .. } = t {
            names.push((term(index, ".signal"), "the forcing signal s(t)".into()));
        }
    }
    let damping_field = format!("{prefix}.damping");
    if let Damping::Tidal { .. } = damping {
        names.push((damping_field.clone(), "the tidal forcing (a/r)⁶ ḟ".into()));
    }
    match damping {
        Damping::None => {}
        Damping::Constant { .. } => names.push((damping_field, "c(t) = 1".into())),
        Damping::Signal { .. } => names.push((
            format!("{damping_field}.signal"),
            "the damping signal s(t)".into(),
        )),
        Damping::Tidal { .. } => names.push((damping_field, "(a/r)⁶".into())),
        Damping::Expression(e) => {
            names.push((format!("{damping_field}.C"), format!("C(t) = {}", e.text())))
        }
    }
    for (index, t) in potential.iter().enumerate() {
        if let Potential::SpinOrbit { .. } = t {
            names.push((term(index, ""), "(a/r)³ cos 2f".into()));
            names.push((term(index, ""), "(a/r)³ sin 2f".into()));
        }
    }
    if uses_time(potential) {
        let index = potential
            .iter()
            .position(|t| matches!(t, Potential::Expression(_)))
            .unwrap_or(0);
        names.push((term(index, ".B"), "t".into()));
    }
    names
}
