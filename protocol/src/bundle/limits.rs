//! The size limits of a bundle and what it may hold (`SPEC.md` §12.6):
//! [`BundleLimits`], with defaults every real skill folder we measured fits.

/// Default [`BundleLimits::max_files`]: the largest published skill has 83.
pub const DEFAULT_MAX_FILES: usize = 1_000;
/// Default [`BundleLimits::max_file_bytes`]: 16 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Default [`BundleLimits::max_bundle_bytes`]: 64 MiB; the largest published
/// skill has 5.6 MB.
pub const DEFAULT_MAX_BUNDLE_BYTES: u64 = 64 * 1024 * 1024;

/// Limits on one bundle, set by the accept policy
/// ([`AcceptPolicy::bundle_limits`](crate::AcceptPolicy::bundle_limits)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleLimits {
    /// Most files, `SKILL.md` included.
    pub max_files: usize,
    /// Largest file, in bytes. A blob upload is bounded by this, not by the
    /// request body limit.
    pub max_file_bytes: u64,
    /// Largest sum of the file sizes, in bytes.
    pub max_bundle_bytes: u64,
    /// Accept native executables and compiled bytecode. Off by default: no
    /// one can review them, and the scanner cannot read them.
    pub allow_native_code: bool,
}

impl Default for BundleLimits {
    fn default() -> Self {
        BundleLimits {
            max_files: DEFAULT_MAX_FILES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_bundle_bytes: DEFAULT_MAX_BUNDLE_BYTES,
            allow_native_code: false,
        }
    }
}
