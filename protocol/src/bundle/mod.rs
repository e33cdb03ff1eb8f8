//! Bundles (`SPEC.md` §12, profile `ecp-1.3`): a skill folder — `SKILL.md`
//! with its scripts, references and assets — shared as a listing of
//! content-addressed files.
//!
//! A packet keeps carrying `SKILL.md` in `skillBody` (so a node that knows
//! only ECP/1.x takes it as a plain skill) and adds `files`, one entry per
//! file with its path, size, mode and SHA-256, and `bundleDigest` over them.
//! File contents travel apart, as blobs addressed by their SHA-256.
//!
//! This module is pure, like the crate: a node hands it listings and bytes.
//! [`BundleManifest::for_skill`] builds the listing a sender puts on a packet
//! ([`SkillPacket::with_bundle`]); [`BundleManifest::from_packet`] checks a
//! received listing and keeps it ([`check_packet`], which the merge calls
//! in stage 2, only checks it);
//! [`BundleManifest::verify_blob`] checks each file's bytes once they are
//! held, and [`scan_bundle`] checks and scans them all, before the bundle
//! is accepted: the one call a node's intake makes.
//!
//! # Layout
//!
//! - `mod.rs`: [`BundleManifest`], [`BundleError`] (every refusal, each a
//!   `bundle` stage reason), [`FileMode`].
//! - `paths.rs`: the path rules, one path and all together.
//! - `limits.rs`: [`BundleLimits`] and their defaults.
//! - `digest.rs`: the canonical listing and [`bundle_digest`].
//! - [`kind`]: the content sniffer, script detection, extension mismatches.
//! - [`scan`]: [`scan_bundle`], the safety scan of every file once held —
//!   text by its language, archives walked under their limits, content
//!   against extension, files `SKILL.md` runs that the bundle lacks.

mod digest;
pub mod kind;
mod limits;
mod paths;
pub mod scan;

use std::collections::BTreeSet;

use thiserror::Error;

pub use digest::{DIGEST_PREFIX, bundle_digest, canonical_listing, is_sha256_hex};
pub use kind::{ContentKind, KindMismatch};
pub use limits::{
    BundleLimits, DEFAULT_ARCHIVE_RATIO_FLOOR, DEFAULT_MAX_ARCHIVE_DEPTH, DEFAULT_MAX_ARCHIVE_EXPANDED_BYTES,
    DEFAULT_MAX_ARCHIVE_MEMBERS, DEFAULT_MAX_ARCHIVE_RATIO, DEFAULT_MAX_BUNDLE_BYTES,
    DEFAULT_MAX_BUNDLE_EXPANDED_BYTES, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES,
};
pub(crate) use paths::shown;
pub use paths::{MAX_PATH_BYTES, MAX_SEGMENT_BYTES, SKILL_MD, check_path, check_tree};
pub use scan::{BundleScan, scan_bundle};

use crate::integrity;
use crate::merge::Decision;
use crate::wire::{BlobQuery, BundleFile, SkillPacket};

/// Most digests one `POST /ecp/blobs/missing` may ask about: a bundle's
/// worth at the default limit.
pub const MAX_BLOBS_PER_QUERY: usize = DEFAULT_MAX_FILES;

/// Why a bundle is refused. Each displays as the text after
/// `invalid bundle: ` (`SPEC.md` §12.7), on one line; paths are shown
/// escaped and cut to 120 characters.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BundleError {
    /// A path breaks a rule of §12.4.
    #[error("path \"{path}\" {problem}")]
    BadPath {
        /// The path, as shown.
        path: String,
        /// The rule it breaks.
        problem: &'static str,
    },
    /// A path is listed twice.
    #[error("path \"{path}\" is listed twice")]
    DuplicatePath {
        /// The path, as shown.
        path: String,
    },
    /// Two paths differ only in case or Unicode normalisation.
    #[error(
        "paths \"{first}\" and \"{second}\" differ only in case or Unicode normalisation; they would be one file on many file systems"
    )]
    CaseCollision {
        /// The path listed first.
        first: String,
        /// The other.
        second: String,
    },
    /// A path is a file and also a folder above another file.
    #[error("\"{file}\" is a file and also the folder of \"{path}\"")]
    FileIsFolder {
        /// The file.
        file: String,
        /// A path under it.
        path: String,
    },
    /// No `SKILL.md` at the root.
    #[error("files has no SKILL.md at its root; list it with the sha256 of skillBody")]
    NoSkillMd,
    /// More files than [`BundleLimits::max_files`].
    #[error("files lists {count} files, over the limit of {limit}")]
    TooManyFiles {
        /// Files listed.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A file larger than [`BundleLimits::max_file_bytes`].
    #[error("file \"{path}\" is {size} bytes, over the limit of {limit} per file")]
    FileTooLarge {
        /// The path, as shown.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The files together are larger than [`BundleLimits::max_bundle_bytes`].
    #[error("the files add up to {size} bytes, over the limit of {limit} per bundle")]
    BundleTooLarge {
        /// The sum of the sizes.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// An entry's `sha256` is not 64 lowercase hex characters.
    #[error("file \"{path}\" has a sha256 that is not 64 lowercase hex characters")]
    BadHash {
        /// The path, as shown.
        path: String,
    },
    /// An entry's `mode` is neither `0644` nor `0755`.
    #[error("file \"{path}\" has mode {mode:?}; only \"0644\" and \"0755\" exist")]
    BadMode {
        /// The path, as shown.
        path: String,
        /// The mode, cut to 8 characters.
        mode: String,
    },
    /// The `SKILL.md` entry does not describe `skillBody`.
    #[error("the SKILL.md entry does not describe skillBody: {what}")]
    SkillMdMismatch {
        /// Which field differs.
        what: &'static str,
    },
    /// The body of a bundle has no frontmatter: a receiver would rebuild it
    /// (§7.6.4), and the rebuilt `SKILL.md` would not be the listed one.
    #[error("the SKILL.md of a bundle must start with its frontmatter")]
    SkillMdWithoutFrontmatter,
    /// `files` without `bundleDigest`.
    #[error("bundleDigest is missing; send sha256:<hex> of the canonical listing of files")]
    DigestMissing,
    /// `bundleDigest` without `files`.
    #[error("bundleDigest is set but files is empty")]
    DigestWithoutFiles,
    /// `bundleDigest` is not the digest of `files`.
    #[error("bundleDigest does not match files (claimed {claimed}, computed {computed})")]
    DigestMismatch {
        /// The claimed digest, cut to 80 characters and escaped.
        claimed: String,
        /// The digest of the listing.
        computed: String,
    },
    /// A blob was offered for a path the bundle does not list.
    #[error("file \"{path}\" is not in the bundle")]
    NotListed {
        /// The path, as shown.
        path: String,
    },
    /// A file's bytes differ from its entry.
    #[error("file \"{path}\" does not match its entry: {what}")]
    ContentMismatch {
        /// The path, as shown.
        path: String,
        /// `size` or `sha256`.
        what: &'static str,
    },
    /// A native executable or compiled bytecode, refused by default.
    #[error(
        "file \"{path}\" is a {kind}; native executables and compiled bytecode are refused (send the source)"
    )]
    NativeCode {
        /// The path, as shown.
        path: String,
        /// What it is.
        kind: ContentKind,
    },
    /// Mode `0755` on a file that is not a text script.
    #[error("file \"{path}\" has mode 0755 but is not a text script (a shebang or a script extension)")]
    ExecutableNotScript {
        /// The path, as shown.
        path: String,
    },
    /// An archive unpacks past [`BundleLimits::max_archive_expanded_bytes`].
    #[error(
        "archive \"{path}\" unpacks to more than {limit} bytes, the limit per archive; send its files unpacked"
    )]
    ArchiveTooLarge {
        /// The bundle's archive, as shown.
        path: String,
        /// The limit.
        limit: u64,
    },
    /// The archives together unpack past
    /// [`BundleLimits::max_bundle_expanded_bytes`].
    #[error(
        "the archives of the bundle unpack to more than {limit} bytes, the limit per bundle (reached in \"{path}\"); send their files unpacked"
    )]
    ArchivesTooLarge {
        /// The archive being unpacked when the limit was reached, as shown.
        path: String,
        /// The limit.
        limit: u64,
    },
    /// An archive unpacks to more than [`BundleLimits::max_archive_ratio`]
    /// times its size.
    #[error(
        "archive \"{path}\" unpacks to more than {ratio} times its size, refused as a decompression bomb; send its files unpacked"
    )]
    ArchiveRatio {
        /// The bundle's archive, as shown.
        path: String,
        /// The limit.
        ratio: u64,
    },
    /// A member of an archive unpacks past [`BundleLimits::max_file_bytes`].
    #[error(
        "archive member \"{path}\" unpacks to more than {limit} bytes, the limit per file; send it apart or smaller"
    )]
    MemberTooLarge {
        /// The member, as `archive!member`, as shown.
        path: String,
        /// The limit.
        limit: u64,
    },
    /// An archive holds more than [`BundleLimits::max_archive_members`].
    #[error(
        "archive \"{path}\" holds more than {limit} members, the limit per archive; send its files unpacked"
    )]
    TooManyMembers {
        /// The bundle's archive, as shown.
        path: String,
        /// The limit.
        limit: usize,
    },
    /// Archives nested deeper than [`BundleLimits::max_archive_depth`].
    #[error("archive \"{path}\" is nested more than {limit} archives deep; send the inner archive unpacked")]
    ArchiveTooDeep {
        /// The nested archive, as `archive!member`, as shown.
        path: String,
        /// The limit.
        limit: usize,
    },
}

/// A file's mode: the two a bundle knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileMode {
    /// `0644`.
    Regular,
    /// `0755`: only for text scripts ([`kind::is_text_script`]).
    Executable,
}

impl FileMode {
    /// As the wire writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            FileMode::Regular => "0644",
            FileMode::Executable => "0755",
        }
    }

    /// Reads the wire form; `None` for anything else.
    pub fn parse(text: &str) -> Option<FileMode> {
        match text {
            "0644" => Some(FileMode::Regular),
            "0755" => Some(FileMode::Executable),
            _ => None,
        }
    }

    /// The mode a file gets: executable only when the sender marked it so
    /// and it is a text script.
    pub fn for_file(path: &str, bytes: &[u8], executable: bool) -> FileMode {
        if executable && kind::is_text_script(path, bytes) { FileMode::Executable } else { FileMode::Regular }
    }
}

/// What [`BundleManifest::verify_blob`] learnt about an accepted file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobCheck {
    /// What the bytes are.
    pub kind: ContentKind,
    /// Set when the content is not what the extension says: a finding for
    /// the scan, not a refusal.
    pub mismatch: Option<KindMismatch>,
}

/// A checked listing of a bundle's files, sorted by path bytes, with its digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleManifest {
    files: Vec<BundleFile>,
    digest: String,
    limits: BundleLimits,
}

impl BundleManifest {
    /// The listing a sender puts on a packet for the skill whose `SKILL.md`
    /// is `body` and whose other files are `companions` (path relative to
    /// the skill folder, bytes, whether the file system marks it executable).
    /// The executable bit is kept only for text scripts ([`FileMode::for_file`]).
    ///
    /// # Errors
    ///
    /// The first rule the folder breaks; `companions` must not list `SKILL.md`.
    pub fn for_skill<'a>(
        body: &str,
        companions: impl IntoIterator<Item = (&'a str, &'a [u8], bool)>,
        limits: &BundleLimits,
    ) -> Result<BundleManifest, BundleError> {
        let companions: Vec<_> = companions.into_iter().collect();
        let count = companions.len() + 1;
        if count > limits.max_files {
            return Err(BundleError::TooManyFiles { count, limit: limits.max_files });
        }
        let mut files = Vec::with_capacity(count);
        files.push(skill_md_entry(body));
        for (path, bytes, executable) in companions {
            check_path(path)?;
            let mode = FileMode::for_file(path, bytes, executable);
            check_content(path, bytes, mode, limits)?;
            files.push(BundleFile {
                path: path.to_owned(),
                size: bytes.len() as u64,
                mode: mode.as_str().to_owned(),
                sha256: integrity::sha256_hex(bytes),
            });
        }
        check_listing(&files, limits)?;
        Ok(BundleManifest::sorted(files, limits))
    }

    /// The checked listing of a received packet: `None` for a plain skill
    /// (no `files`, no `bundleDigest`).
    ///
    /// # Errors
    ///
    /// The first rule of §12.2–§12.6 the listing breaks ([`check_packet`]).
    pub fn from_packet(
        packet: &SkillPacket,
        limits: &BundleLimits,
    ) -> Result<Option<BundleManifest>, BundleError> {
        let Some(digest) = checked_digest(packet, limits)? else { return Ok(None) };
        let mut files = packet.files.clone();
        files.sort_unstable_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        Ok(Some(BundleManifest { files, digest, limits: limits.clone() }))
    }

    fn sorted(mut files: Vec<BundleFile>, limits: &BundleLimits) -> BundleManifest {
        files.sort_unstable_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        let digest = bundle_digest(&files);
        BundleManifest { files, digest, limits: limits.clone() }
    }

    /// The entries, sorted by path bytes, `SKILL.md` included.
    pub fn files(&self) -> &[BundleFile] {
        &self.files
    }

    /// `bundleDigest`: `sha256:<hex>` of the canonical listing.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The sum of the file sizes.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// The entry for `path`.
    pub fn entry(&self, path: &str) -> Option<&BundleFile> {
        self.files.binary_search_by(|f| f.path.as_bytes().cmp(path.as_bytes())).ok().map(|i| &self.files[i])
    }

    /// The blobs a receiver must hold before it accepts the bundle: the
    /// SHA-256 of every file but `SKILL.md` (which is `skillBody`), each
    /// once, sorted.
    pub fn blob_ids(&self) -> BTreeSet<&str> {
        self.files.iter().filter(|f| f.path != SKILL_MD).map(|f| f.sha256.as_str()).collect()
    }

    /// What becomes of an installing decision for this bundle while some
    /// of its blobs are not held (`held` says which are): `None` when all
    /// are, else a refusal with stage `bundle` and the reason `pending: …`
    /// naming the first missing file (`SPEC.md` §12.9.2). A node records it
    /// instead of installing anything of the bundle, and retries.
    pub fn pending_decision(&self, held: impl Fn(&str) -> bool) -> Option<Decision> {
        let mut missing = self.files.iter().filter(|f| f.path != SKILL_MD && !held(&f.sha256));
        let first = missing.next()?;
        let count = 1 + missing.count();
        Some(crate::merge::pending(count, self.files.len(), &paths::shown(&first.path)))
    }

    /// Checks the bytes held for `path`: its size and SHA-256 as listed, no
    /// native code unless the limits allow it, mode `0755` only on a text
    /// script. Says what the bytes are, and whether they match the extension.
    ///
    /// # Errors
    ///
    /// [`BundleError::NotListed`], [`BundleError::ContentMismatch`],
    /// [`BundleError::NativeCode`], [`BundleError::ExecutableNotScript`].
    pub fn verify_blob(&self, path: &str, bytes: &[u8]) -> Result<BlobCheck, BundleError> {
        let entry = self.entry(path).ok_or_else(|| BundleError::NotListed { path: paths::shown(path) })?;
        let mismatch = |what| Err(BundleError::ContentMismatch { path: paths::shown(path), what });
        if entry.size != bytes.len() as u64 {
            return mismatch("size");
        }
        if integrity::sha256_hex(bytes) != entry.sha256 {
            return mismatch("sha256");
        }
        // `from_packet` and `for_skill` admitted only the two modes.
        let mode = FileMode::parse(&entry.mode).unwrap_or(FileMode::Regular);
        check_content(path, bytes, mode, &self.limits)
    }
}

/// Checks a received packet's listing (`SPEC.md` §7.6.6): `Ok(false)` for
/// a plain skill, `Ok(true)` for a bundle whose listing keeps every rule of
/// §12.2–§12.6. What the merge runs: [`BundleManifest::from_packet`]
/// without keeping a copy of the listing.
///
/// # Errors
///
/// The first rule the listing breaks.
pub fn check_packet(packet: &SkillPacket, limits: &BundleLimits) -> Result<bool, BundleError> {
    checked_digest(packet, limits).map(|digest| digest.is_some())
}

/// The digest of a received listing that keeps every rule; `None` for a
/// plain skill.
fn checked_digest(packet: &SkillPacket, limits: &BundleLimits) -> Result<Option<String>, BundleError> {
    match (packet.files.is_empty(), packet.bundle_digest.is_empty()) {
        (true, true) => return Ok(None),
        (true, false) => return Err(BundleError::DigestWithoutFiles),
        (false, true) => return Err(BundleError::DigestMissing),
        (false, false) => {}
    }
    check_listing(&packet.files, limits)?;
    let skill_md = packet.files.iter().find(|f| f.path == SKILL_MD).ok_or(BundleError::NoSkillMd)?;
    let mismatch = |what| Err(BundleError::SkillMdMismatch { what });
    if skill_md.sha256 != packet.integrity_hash {
        return mismatch("its sha256 is not integrityHash");
    }
    if skill_md.size != packet.skill_body.len() as u64 {
        return mismatch("its size is not the byte length of skillBody");
    }
    if skill_md.mode != FileMode::Regular.as_str() {
        return mismatch("its mode is not 0644");
    }
    let computed = bundle_digest(&packet.files);
    if packet.bundle_digest != computed {
        let claimed: String = packet.bundle_digest.chars().take(80).flat_map(char::escape_default).collect();
        return Err(BundleError::DigestMismatch { claimed, computed });
    }
    Ok(Some(computed))
}

/// The `SKILL.md` entry of a skill whose body is `body`: the bytes
/// `integrityHash` covers.
fn skill_md_entry(body: &str) -> BundleFile {
    BundleFile {
        path: SKILL_MD.to_owned(),
        size: body.len() as u64,
        mode: FileMode::Regular.as_str().to_owned(),
        sha256: integrity::body_hash(body),
    }
}

/// The rules on a listing alone: count, each entry, total size, the tree.
fn check_listing(files: &[BundleFile], limits: &BundleLimits) -> Result<(), BundleError> {
    if files.len() > limits.max_files {
        return Err(BundleError::TooManyFiles { count: files.len(), limit: limits.max_files });
    }
    let mut total = 0u64;
    for file in files {
        check_path(&file.path)?;
        let path = || paths::shown(&file.path);
        if !is_sha256_hex(&file.sha256) {
            return Err(BundleError::BadHash { path: path() });
        }
        if FileMode::parse(&file.mode).is_none() {
            let mode = file.mode.chars().take(8).collect();
            return Err(BundleError::BadMode { path: path(), mode });
        }
        if file.size > limits.max_file_bytes {
            return Err(BundleError::FileTooLarge {
                path: path(),
                size: file.size,
                limit: limits.max_file_bytes,
            });
        }
        total = total.saturating_add(file.size);
    }
    if total > limits.max_bundle_bytes {
        return Err(BundleError::BundleTooLarge { size: total, limit: limits.max_bundle_bytes });
    }
    check_tree(files.iter().map(|f| f.path.as_str()))
}

/// The rules on a file's bytes: what it is may be refused, and its mode
/// must fit it.
fn check_content(
    path: &str,
    bytes: &[u8],
    mode: FileMode,
    limits: &BundleLimits,
) -> Result<BlobCheck, BundleError> {
    let kind = kind::sniff(bytes);
    if (kind.is_native_executable() || kind.is_bytecode()) && !limits.allow_native_code {
        return Err(BundleError::NativeCode { path: paths::shown(path), kind });
    }
    if mode == FileMode::Executable && !kind::is_text_script(path, bytes) {
        return Err(BundleError::ExecutableNotScript { path: paths::shown(path) });
    }
    Ok(BlobCheck { kind, mismatch: kind::kind_mismatch(path, kind) })
}

/// Why a `POST /ecp/blobs/missing` body is refused (over HTTP: 400).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BlobQueryError {
    /// More than [`MAX_BLOBS_PER_QUERY`] digests.
    #[error("blobs lists {count} digests, over the limit of {MAX_BLOBS_PER_QUERY}; ask in several requests")]
    TooMany {
        /// Digests listed.
        count: usize,
    },
    /// An entry is not a SHA-256 in lowercase hex.
    #[error("blobs[{index}] is not 64 lowercase hex characters")]
    BadDigest {
        /// Its 0-based position.
        index: usize,
    },
}

impl BlobQuery {
    /// Checks the size of the query and the form of every digest.
    ///
    /// # Errors
    ///
    /// The first problem, as a [`BlobQueryError`].
    pub fn validate(&self) -> Result<(), BlobQueryError> {
        if self.blobs.len() > MAX_BLOBS_PER_QUERY {
            return Err(BlobQueryError::TooMany { count: self.blobs.len() });
        }
        match self.blobs.iter().position(|b| !is_sha256_hex(b)) {
            Some(index) => Err(BlobQueryError::BadDigest { index }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
