//! Config, outputs, plots.
