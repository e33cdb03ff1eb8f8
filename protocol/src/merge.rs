//! merge (in progress)
