//! Integration tests of `ecp-protocol`, one binary (one link step).
//!
//! Modules:
// scan_corpus: recall and false-positive rate of the safety scanner on the labeled corpus.
mod scan_corpus;
