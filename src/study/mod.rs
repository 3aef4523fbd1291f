//! Studies.
