//! restart (to be written)
