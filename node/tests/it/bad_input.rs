//! bad_input (to be written)
