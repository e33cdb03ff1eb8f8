//! auth (to be written)
