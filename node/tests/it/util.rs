//! util (to be written)
