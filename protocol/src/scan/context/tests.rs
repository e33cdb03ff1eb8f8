//! Tests of the explanatory-context test: each shape that lowers, and the
//! near misses an attacker would write, which must not.

use super::*;
