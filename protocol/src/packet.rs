//! packet (in progress)
