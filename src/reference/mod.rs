//! Reference solutions.
