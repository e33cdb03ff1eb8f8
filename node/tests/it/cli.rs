//! cli (to be written)
