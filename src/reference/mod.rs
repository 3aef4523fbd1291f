//! Independent high-accuracy references of the continuous systems, against which the
//! discrete schemes are measured: the general ODE reference ([`ode`]); a family's
//! exact flows live in its wing (the linear-PH one is `crate::linear_ph::reference_flow`).

pub mod ode;
