//! Archives inside a bundle (`.tar`, `.tar.gz`/`.tgz`, `.gz`, `.zip` and
//! the formats built on zip), opened in memory and walked member by member
//! under the limits against decompression bombs (`SPEC.md` §12.6.2).
//!
//! Nothing a header says is trusted: every decompressed byte is counted as
//! it is produced ([`Meter`]) and every read is capped
//! ([`io::Read::take`]), so an archive that lies about its sizes stops at
//! the limit. A member that is itself an archive is walked in turn, to
//! [`BundleLimits::max_archive_depth`]. What kind an archive is comes from
//! its bytes, not its name.

use std::cell::Cell;
use std::io::{self, Cursor, Read};

use flate2::read::MultiGzDecoder;

use super::super::kind::{ContentKind, sniff};
use super::super::{BundleError, BundleLimits, paths};

/// What the walk meets.
pub(super) enum Event<'a> {
    /// A regular member: its name (`archive!member`), bytes and kind.
    Member { name: &'a str, bytes: &'a [u8], kind: ContentKind },
    /// An archive, or a member of one, that cannot be read: not scanned.
    Unreadable { name: &'a str, why: String },
    /// A member whose path, or whose link's target, leaves the folder the
    /// archive is unpacked in (`../x`, `/etc/x`).
    Escape { name: &'a str },
}

/// Whether `kind` is an archive this module opens.
pub(super) fn is_archive(kind: ContentKind) -> bool {
    matches!(kind, ContentKind::Gzip | ContentKind::Zip | ContentKind::Tar)
}

/// How far from its end a zip's directory record may start: the record
/// (22 bytes) and its longest comment.
const ZIP_TAIL_BYTES: usize = 22 + 65_535;

/// Whether binary bytes of another kind end with a zip directory record:
/// a zip appended to an image or a PDF, which unzip tools open by its end.
fn appended_zip(kind: ContentKind, bytes: &[u8]) -> bool {
    !is_archive(kind)
        && !matches!(kind, ContentKind::Text | ContentKind::Svg)
        && memchr::memmem::rfind(&bytes[bytes.len().saturating_sub(ZIP_TAIL_BYTES)..], b"PK\x05\x06")
            .is_some()
}

/// The archives of one bundle: the bytes all of them unpacked to so far.
pub(super) struct Archives<'l> {
    limits: &'l BundleLimits,
    expanded: Cell<u64>,
}

/// Told about every member; an error stops the walk.
type Visit<'v> = dyn FnMut(Event<'_>) -> Result<(), BundleError> + 'v;

/// One archive of the bundle being walked, with the archives inside it.
struct Walk<'l> {
    limits: &'l BundleLimits,
    /// The bundle's archive, as reasons show it.
    top: String,
    /// Bytes this archive may unpack to, and the reason past them.
    cap: u64,
    cap_error: BundleError,
    /// Bytes the bundle's archives may still unpack to, and the reason.
    bundle_cap: u64,
    /// Decompressed so far, this archive and those inside it.
    expanded: Cell<u64>,
    /// A meter stopped at its cap.
    capped: Cell<bool>,
    members: Cell<usize>,
}

impl<'l> Archives<'l> {
    pub(super) fn new(limits: &'l BundleLimits) -> Archives<'l> {
        Archives { limits, expanded: Cell::new(0) }
    }

    /// Walks the archive `path` of the bundle (`bytes`, of `kind`), telling
    /// `visit` about every member, the members of archives inside it too.
    /// A file of another binary kind is walked when a zip is appended to
    /// it (and left alone when that zip does not open); anything else is
    /// no archive, and nothing happens.
    ///
    /// # Errors
    ///
    /// A limit of §12.6.2 passed, or what `visit` returned.
    pub(super) fn walk(
        &self,
        path: &str,
        bytes: &[u8],
        kind: ContentKind,
        visit: &mut Visit<'_>,
    ) -> Result<(), BundleError> {
        let lenient = appended_zip(kind, bytes);
        if !is_archive(kind) && !lenient {
            return Ok(());
        }
        let kind = if lenient { ContentKind::Zip } else { kind };
        let l = self.limits;
        let top = paths::shown(path);
        let by_ratio = l.max_archive_ratio.saturating_mul(bytes.len() as u64).max(l.archive_ratio_floor);
        let (cap, cap_error) = if by_ratio < l.max_archive_expanded_bytes {
            (by_ratio, BundleError::ArchiveRatio { path: top.clone(), ratio: l.max_archive_ratio })
        } else {
            let limit = l.max_archive_expanded_bytes;
            (limit, BundleError::ArchiveTooLarge { path: top.clone(), limit })
        };
        let walk = Walk {
            limits: l,
            top,
            cap,
            cap_error,
            bundle_cap: l.max_bundle_expanded_bytes.saturating_sub(self.expanded.get()),
            expanded: Cell::new(0),
            capped: Cell::new(false),
            members: Cell::new(0),
        };
        let result = walk.open(path, bytes, kind, 1, lenient, visit);
        self.expanded.set(self.expanded.get() + walk.expanded.get());
        result
    }
}

/// A reader that counts what it yields against the walk's caps and ends
/// (EOF) at them, marking the walk as capped.
struct Meter<'w, R> {
    inner: R,
    expanded: &'w Cell<u64>,
    cap: u64,
    capped: &'w Cell<bool>,
}

impl<R: Read> Read for Meter<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let used = self.expanded.get();
        // One byte past the cap, so that reaching it exactly is no error.
        let room = self.cap.saturating_add(1).saturating_sub(used);
        if room == 0 {
            self.capped.set(true);
            return Ok(0);
        }
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.expanded.set(used + n as u64);
        if used + n as u64 > self.cap {
            self.capped.set(true);
        }
        Ok(n)
    }
}

/// Why an archive could not be read, or a limit was reached while reading.
enum Stop {
    Limit(BundleError),
    Unreadable(String),
}

impl From<BundleError> for Stop {
    fn from(e: BundleError) -> Self {
        Stop::Limit(e)
    }
}

impl Walk<'_> {
    /// Opens the archive `name` at nesting `depth` (1: a file of the
    /// bundle); `appended`: a zip appended to another kind, left alone
    /// when it does not open.
    fn open(
        &self,
        name: &str,
        bytes: &[u8],
        kind: ContentKind,
        depth: usize,
        appended: bool,
        visit: &mut Visit<'_>,
    ) -> Result<(), BundleError> {
        if depth > self.limits.max_archive_depth {
            return Err(BundleError::ArchiveTooDeep {
                path: paths::shown(name),
                limit: self.limits.max_archive_depth,
            });
        }
        let read = match kind {
            ContentKind::Gzip => self.gzip(name, bytes, depth, visit),
            ContentKind::Zip => self.zip(name, bytes, depth, appended, visit),
            _ => self.tar(name, Cursor::new(bytes), depth, visit),
        };
        match read {
            Ok(()) => Ok(()),
            Err(Stop::Limit(e)) => Err(e),
            Err(Stop::Unreadable(why)) => visit(Event::Unreadable { name, why }),
        }
    }

    /// The error of a meter that stopped: the bundle's cap or this archive's.
    fn cap_reached(&self) -> BundleError {
        if self.expanded.get() > self.bundle_cap {
            BundleError::ArchivesTooLarge {
                path: self.top.clone(),
                limit: self.limits.max_bundle_expanded_bytes,
            }
        } else {
            self.cap_error.clone()
        }
    }

    fn meter<R: Read>(&self, inner: R) -> Meter<'_, R> {
        Meter { inner, expanded: &self.expanded, cap: self.cap.min(self.bundle_cap), capped: &self.capped }
    }

    /// An I/O error while reading: a limit when a meter stopped, else the
    /// archive is unreadable.
    fn failed(&self, e: impl std::fmt::Display) -> Stop {
        if self.capped.get() { Stop::Limit(self.cap_reached()) } else { Stop::Unreadable(e.to_string()) }
    }

    fn count_member(&self) -> Result<(), Stop> {
        let n = self.members.get() + 1;
        self.members.set(n);
        if n > self.limits.max_archive_members {
            return Err(Stop::Limit(BundleError::TooManyMembers {
                path: self.top.clone(),
                limit: self.limits.max_archive_members,
            }));
        }
        Ok(())
    }

    /// Reads one member whole, at most the per-file limit.
    fn read_member(&self, name: &str, reader: impl Read) -> Result<Vec<u8>, Stop> {
        let limit = self.limits.max_file_bytes;
        let mut bytes = Vec::new();
        reader.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| self.failed(e))?;
        if self.capped.get() {
            return Err(Stop::Limit(self.cap_reached()));
        }
        if bytes.len() as u64 > limit {
            return Err(Stop::Limit(BundleError::MemberTooLarge { path: paths::shown(name), limit }));
        }
        Ok(bytes)
    }

    /// A member read: told to the visitor, and walked when an archive.
    fn member(&self, name: &str, bytes: &[u8], depth: usize, visit: &mut Visit<'_>) -> Result<(), Stop> {
        let kind = sniff(bytes);
        visit(Event::Member { name, bytes, kind })?;
        if is_archive(kind) {
            self.open(name, bytes, kind, depth + 1, false, visit)?;
        } else if appended_zip(kind, bytes) {
            self.open(name, bytes, ContentKind::Zip, depth + 1, true, visit)?;
        }
        Ok(())
    }

    /// gzip: a tar inside is walked as the archive's members
    /// (`x.tar.gz!src/a.py`); anything else is its one member, named
    /// without `.gz` (`notes.txt.gz!notes.txt`).
    fn gzip(&self, name: &str, bytes: &[u8], depth: usize, visit: &mut Visit<'_>) -> Result<(), Stop> {
        let mut stream = self.meter(MultiGzDecoder::new(bytes));
        let mut head = Vec::with_capacity(512);
        (&mut stream).take(512).read_to_end(&mut head).map_err(|e| self.failed(e))?;
        let mut stream = Cursor::new(head).chain(stream);
        if sniff(stream.get_ref().0.get_ref()) == ContentKind::Tar {
            return self.tar(name, stream, depth, visit);
        }
        self.count_member()?;
        let leaf = name.rsplit(['/', '!']).next().unwrap_or(name);
        let inner = match leaf.rsplit_once('.') {
            Some((stem, ext)) if ext.eq_ignore_ascii_case("tgz") => format!("{stem}.tar"),
            Some((stem, ext)) if ext.eq_ignore_ascii_case("gz") && !stem.is_empty() => stem.to_owned(),
            _ => leaf.to_owned(),
        };
        let member = format!("{name}!{inner}");
        let bytes = self.read_member(&member, &mut stream)?;
        self.member(&member, &bytes, depth, visit)
    }

    fn tar(&self, name: &str, reader: impl Read, depth: usize, visit: &mut Visit<'_>) -> Result<(), Stop> {
        let mut archive = tar::Archive::new(reader);
        let entries = archive.entries().map_err(|e| self.failed(e))?;
        for entry in entries {
            let mut entry = entry.map_err(|e| self.failed(e))?;
            self.count_member()?;
            let member = member_name(name, &entry.path_bytes());
            let kind = entry.header().entry_type();
            let target = entry.link_name_bytes().map(|t| String::from_utf8_lossy(&t).into_owned());
            if escapes(&member[name.len() + 1..])
                || (kind.is_symlink() && target.as_deref().is_some_and(escapes))
            {
                visit(Event::Escape { name: &member })?;
            }
            if !(kind.is_file() || kind.is_contiguous()) {
                continue;
            }
            let bytes = self.read_member(&member, &mut entry)?;
            self.member(&member, &bytes, depth, visit)?;
        }
        // A tar stream that ended early because a meter stopped it.
        if self.capped.get() {
            return Err(Stop::Limit(self.cap_reached()));
        }
        Ok(())
    }

    fn zip(
        &self,
        name: &str,
        bytes: &[u8],
        depth: usize,
        appended: bool,
        visit: &mut Visit<'_>,
    ) -> Result<(), Stop> {
        let mut archive = match zip::ZipArchive::new(Cursor::new(bytes)) {
            Ok(archive) => archive,
            // Bytes that only look like a zip's end: an image is no archive.
            Err(_) if appended => return Ok(()),
            Err(e) => return Err(self.failed(e)),
        };
        let left = self.limits.max_archive_members.saturating_sub(self.members.get());
        if archive.len() > left {
            // Refused before a member is read: the central directory counts them.
            return Err(Stop::Limit(BundleError::TooManyMembers {
                path: self.top.clone(),
                limit: self.limits.max_archive_members,
            }));
        }
        for index in 0..archive.len() {
            self.count_member()?;
            let file = match archive.by_index(index) {
                Ok(file) => file,
                Err(e) => {
                    let member = format!("{name}!#{index}");
                    visit(Event::Unreadable { name: &member, why: e.to_string() })?;
                    continue;
                }
            };
            let member = member_name(name, file.name_raw());
            if file.is_dir() {
                continue;
            }
            let symlink = file.is_symlink();
            let read = self.read_member(&member, self.meter(file));
            let bytes = match read {
                Ok(bytes) => bytes,
                Err(Stop::Unreadable(why)) => {
                    visit(Event::Unreadable { name: &member, why })?;
                    continue;
                }
                Err(stop) => return Err(stop),
            };
            let inner = &member[name.len() + 1..];
            if escapes(inner) || symlink && escapes(&String::from_utf8_lossy(&bytes)) {
                visit(Event::Escape { name: &member })?;
            }
            if !symlink {
                self.member(&member, &bytes, depth, visit)?;
            }
        }
        Ok(())
    }
}

/// Longest member name shown, in characters.
const MAX_MEMBER_CHARS: usize = 255;

/// `archive!member`, the member's name as findings and reasons may show
/// it: UTF-8 (invalid bytes replaced), control and invisible characters
/// escaped, at most [`MAX_MEMBER_CHARS`] characters.
fn member_name(archive: &str, raw: &[u8]) -> String {
    let mut out = format!("{archive}!");
    for c in String::from_utf8_lossy(raw).chars().take(MAX_MEMBER_CHARS) {
        if crate::scan::is_invisible(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a member path (or a link target) leaves the folder it is
/// unpacked in: absolute, a drive letter, or a `..` segment.
fn escapes(path: &str) -> bool {
    let b = path.as_bytes();
    path.starts_with(['/', '\\'])
        || b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic()
        || path.split(['/', '\\']).any(|segment| segment == "..")
}
