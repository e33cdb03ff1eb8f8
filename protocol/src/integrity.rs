//! integrity (in progress)
