//! skills_dir (to be written)
