//! The size limits of a bundle and what it may hold (`SPEC.md` §12.6):
//! [`BundleLimits`], with defaults every real skill folder we measured fits.

/// Default [`BundleLimits::max_files`]: the largest published skill has 83.
pub const DEFAULT_MAX_FILES: usize = 1_000;
/// Default [`BundleLimits::max_file_bytes`]: 16 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Default [`BundleLimits::max_bundle_bytes`]: 64 MiB; the largest published
/// skill has 5.6 MB.
pub const DEFAULT_MAX_BUNDLE_BYTES: u64 = 64 * 1024 * 1024;
/// Default [`BundleLimits::max_archive_expanded_bytes`]: 128 MiB, some
/// twenty times the largest archive of a published skill once unpacked.
pub const DEFAULT_MAX_ARCHIVE_EXPANDED_BYTES: u64 = 128 * 1024 * 1024;
/// Default [`BundleLimits::max_bundle_expanded_bytes`]: 512 MiB.
pub const DEFAULT_MAX_BUNDLE_EXPANDED_BYTES: u64 = 512 * 1024 * 1024;
/// Default [`BundleLimits::max_archive_ratio`]: source and markup compress
/// 3–20 times, a decompression bomb a thousand times and more.
pub const DEFAULT_MAX_ARCHIVE_RATIO: u64 = 200;
/// Default [`BundleLimits::archive_ratio_floor`]: 1 MiB.
pub const DEFAULT_ARCHIVE_RATIO_FLOOR: u64 = 1024 * 1024;
/// Default [`BundleLimits::max_archive_members`].
pub const DEFAULT_MAX_ARCHIVE_MEMBERS: usize = 10_000;
/// Default [`BundleLimits::max_archive_depth`]: an archive, an archive in
/// it, and one more.
pub const DEFAULT_MAX_ARCHIVE_DEPTH: usize = 3;

/// Limits on one bundle, set by the accept policy
/// ([`AcceptPolicy::bundle_limits`](crate::AcceptPolicy::bundle_limits)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleLimits {
    /// Most files, `SKILL.md` included.
    pub max_files: usize,
    /// Largest file, in bytes. A blob upload is bounded by this, not by the
    /// request body limit. Also the largest member of an archive, unpacked.
    pub max_file_bytes: u64,
    /// Largest sum of the file sizes, in bytes.
    pub max_bundle_bytes: u64,
    /// Accept native executables and compiled bytecode. Off by default: no
    /// one can review them, and the scanner cannot read them.
    pub allow_native_code: bool,
    /// Most bytes one archive of the bundle (`.tar.gz`, `.zip`, …) may
    /// unpack to, the archives inside it included (`SPEC.md` §12.6.2).
    pub max_archive_expanded_bytes: u64,
    /// Most bytes all the archives of one bundle may unpack to together.
    pub max_bundle_expanded_bytes: u64,
    /// Most times its own size an archive may unpack to, once past
    /// [`archive_ratio_floor`](Self::archive_ratio_floor).
    pub max_archive_ratio: u64,
    /// Bytes an archive may unpack to whatever its ratio: a small archive
    /// of repetitive text is no bomb.
    pub archive_ratio_floor: u64,
    /// Most members (files, folders, links) one archive may hold, the
    /// archives inside it included.
    pub max_archive_members: usize,
    /// Most archives nested one in another: 1 opens the bundle's archives
    /// but no archive inside them.
    pub max_archive_depth: usize,
}

impl Default for BundleLimits {
    fn default() -> Self {
        BundleLimits {
            max_files: DEFAULT_MAX_FILES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_bundle_bytes: DEFAULT_MAX_BUNDLE_BYTES,
            allow_native_code: false,
            max_archive_expanded_bytes: DEFAULT_MAX_ARCHIVE_EXPANDED_BYTES,
            max_bundle_expanded_bytes: DEFAULT_MAX_BUNDLE_EXPANDED_BYTES,
            max_archive_ratio: DEFAULT_MAX_ARCHIVE_RATIO,
            archive_ratio_floor: DEFAULT_ARCHIVE_RATIO_FLOOR,
            max_archive_members: DEFAULT_MAX_ARCHIVE_MEMBERS,
            max_archive_depth: DEFAULT_MAX_ARCHIVE_DEPTH,
        }
    }
}
