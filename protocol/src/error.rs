//! error (in progress)
