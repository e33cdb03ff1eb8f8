//! What a bundle file is, decided on its bytes (`SPEC.md` §12.5): the
//! content sniffer ([`sniff`]), the kinds an extension promises
//! ([`expected_kinds`]), and whether a file may keep its executable bit
//! ([`is_text_script`]).
//!
//! Only magic numbers and the text/binary split are read: cheap, and enough
//! to refuse native code, to tell a font from an image, and to notice a file
//! whose content is not what its name says.

use std::fmt;

/// What a file's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentKind {
    /// UTF-8 text without NUL bytes (Markdown, scripts, JSON, XML, …).
    Text,
    /// An SVG image: text whose first element is `<svg`.
    Svg,
    /// An ELF executable or shared object.
    Elf,
    /// A Windows PE/DOS executable (`MZ`).
    WindowsExe,
    /// A Mach-O executable, thin or fat (universal).
    MachO,
    /// Compiled Python (`.pyc`).
    PythonBytecode,
    /// A Java class file.
    JavaClass,
    /// A WebAssembly module.
    Wasm,
    /// A TrueType font (or a TrueType collection).
    TrueType,
    /// An OpenType font with CFF outlines (`OTTO`).
    OpenType,
    /// WOFF 1.0.
    Woff,
    /// WOFF 2.0.
    Woff2,
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// GIF.
    Gif,
    /// WebP.
    WebP,
    /// PDF.
    Pdf,
    /// gzip (also `.tar.gz`, `.tgz`).
    Gzip,
    /// A zip archive (also `.docx`, `.xlsx`, `.jar`, …).
    Zip,
    /// A POSIX tar archive.
    Tar,
    /// Bytes of no kind above.
    Binary,
}

impl ContentKind {
    /// The kind's short name, as `SPEC.md` §12.5.1 and the test vectors write it.
    pub fn id(self) -> &'static str {
        match self {
            ContentKind::Text => "text",
            ContentKind::Svg => "svg",
            ContentKind::Elf => "elf",
            ContentKind::WindowsExe => "pe",
            ContentKind::MachO => "macho",
            ContentKind::PythonBytecode => "pyc",
            ContentKind::JavaClass => "java-class",
            ContentKind::Wasm => "wasm",
            ContentKind::TrueType => "ttf",
            ContentKind::OpenType => "otf",
            ContentKind::Woff => "woff",
            ContentKind::Woff2 => "woff2",
            ContentKind::Png => "png",
            ContentKind::Jpeg => "jpeg",
            ContentKind::Gif => "gif",
            ContentKind::WebP => "webp",
            ContentKind::Pdf => "pdf",
            ContentKind::Gzip => "gzip",
            ContentKind::Zip => "zip",
            ContentKind::Tar => "tar",
            ContentKind::Binary => "binary",
        }
    }

    /// The kind as reasons and findings spell it.
    pub fn label(self) -> &'static str {
        match self {
            ContentKind::Text => "text",
            ContentKind::Svg => "SVG image",
            ContentKind::Elf => "ELF executable",
            ContentKind::WindowsExe => "Windows executable",
            ContentKind::MachO => "Mach-O executable",
            ContentKind::PythonBytecode => "compiled Python bytecode",
            ContentKind::JavaClass => "Java class file",
            ContentKind::Wasm => "WebAssembly module",
            ContentKind::TrueType => "TrueType font",
            ContentKind::OpenType => "OpenType font",
            ContentKind::Woff => "WOFF font",
            ContentKind::Woff2 => "WOFF2 font",
            ContentKind::Png => "PNG image",
            ContentKind::Jpeg => "JPEG image",
            ContentKind::Gif => "GIF image",
            ContentKind::WebP => "WebP image",
            ContentKind::Pdf => "PDF document",
            ContentKind::Gzip => "gzip archive",
            ContentKind::Zip => "zip archive",
            ContentKind::Tar => "tar archive",
            ContentKind::Binary => "binary data",
        }
    }

    /// Native machine code: refused unless the limits allow native code.
    pub fn is_native_executable(self) -> bool {
        matches!(self, ContentKind::Elf | ContentKind::WindowsExe | ContentKind::MachO)
    }

    /// Compiled bytecode: refused with native code, for the same reason —
    /// no one can review it, and the scanner cannot read it.
    pub fn is_bytecode(self) -> bool {
        matches!(self, ContentKind::PythonBytecode | ContentKind::JavaClass | ContentKind::Wasm)
    }
}

impl fmt::Display for ContentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Magic numbers, tried in order; the first that matches decides.
fn magic(bytes: &[u8]) -> Option<ContentKind> {
    let at = |offset: usize, magic: &[u8]| bytes.get(offset..offset + magic.len()) == Some(magic);
    let be32 =
        |offset: usize| bytes.get(offset..offset + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let kind = if at(0, b"\x7fELF") {
        ContentKind::Elf
    } else if at(0, b"MZ") && bytes.len() >= 64 && bytes[..64].contains(&0) {
        // A text file may start with "MZ"; a DOS header is binary.
        ContentKind::WindowsExe
    } else if [b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe"]
        .iter()
        .any(|m| at(0, *m))
    {
        ContentKind::MachO
    } else if at(0, b"\xca\xfe\xba\xbe") {
        // Shared by Java classes and fat Mach-O: a class file's major version
        // (bytes 6–7) is at least 45, a fat header's architecture count is small.
        match be32(4) {
            Some(word) if word & 0xffff >= 45 => ContentKind::JavaClass,
            _ => ContentKind::MachO,
        }
    } else if at(0, b"\xca\xfe\xba\xbf") {
        ContentKind::MachO
    } else if at(0, b"\0asm") {
        ContentKind::Wasm
    } else if is_python_bytecode(bytes) {
        ContentKind::PythonBytecode
    } else if at(0, b"\x00\x01\x00\x00") || at(0, b"true") || at(0, b"ttcf") {
        ContentKind::TrueType
    } else if at(0, b"OTTO") {
        ContentKind::OpenType
    } else if at(0, b"wOFF") {
        ContentKind::Woff
    } else if at(0, b"wOF2") {
        ContentKind::Woff2
    } else if at(0, b"\x89PNG\r\n\x1a\n") {
        ContentKind::Png
    } else if at(0, b"\xff\xd8\xff") {
        ContentKind::Jpeg
    } else if at(0, b"GIF87a") || at(0, b"GIF89a") {
        ContentKind::Gif
    } else if at(0, b"RIFF") && at(8, b"WEBP") {
        ContentKind::WebP
    } else if at(0, b"%PDF-") {
        ContentKind::Pdf
    } else if at(0, b"\x1f\x8b") {
        ContentKind::Gzip
    } else if at(0, b"PK\x03\x04") || at(0, b"PK\x05\x06") {
        ContentKind::Zip
    } else if at(257, b"ustar") {
        ContentKind::Tar
    } else {
        return None;
    };
    Some(kind)
}

/// A `.pyc` header: a two-byte magic of a CPython release (2.x: 20121–62211,
/// 3.x: 3000–3999 so far) followed by `\r\n`, then binary fields.
fn is_python_bytecode(bytes: &[u8]) -> bool {
    let Some(head) = bytes.get(..16) else { return false };
    let number = u16::from_le_bytes([head[0], head[1]]);
    head[2..4] == *b"\r\n"
        && ((3000..4000).contains(&number) || (20121..=62211).contains(&number))
        && head[4..].contains(&0)
}

/// What `bytes` are: a magic number, else text or binary.
pub fn sniff(bytes: &[u8]) -> ContentKind {
    if let Some(kind) = magic(bytes) {
        return kind;
    }
    if !is_text(bytes) {
        return ContentKind::Binary;
    }
    if is_svg(bytes) { ContentKind::Svg } else { ContentKind::Text }
}

/// UTF-8 without NUL: what a text editor and the scanner can read.
fn is_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && simdutf8::basic::from_utf8(bytes).is_ok()
}

/// An SVG document: after an optional BOM, XML declaration, comments and
/// doctype, the first element is `<svg`. Only the first 4 KiB are read.
fn is_svg(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let Ok(mut text) = std::str::from_utf8(head).or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
    else {
        return false;
    };
    text = text.trim_start_matches('\u{feff}');
    loop {
        text = text.trim_start();
        if let Some(rest) = text.strip_prefix("<?").or_else(|| text.strip_prefix("<!--")) {
            let close = if text.starts_with("<?") { "?>" } else { "-->" };
            match rest.find(close) {
                Some(end) => text = &rest[end + close.len()..],
                None => return false,
            }
        } else if let Some(rest) = text.strip_prefix("<!") {
            match rest.find('>') {
                Some(end) => text = &rest[end + 1..],
                None => return false,
            }
        } else {
            return text.starts_with("<svg");
        }
    }
}

/// The extensions of text scripts: a file with one of them (or a shebang)
/// may keep its executable bit.
pub(super) const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "ksh", "py", "rb", "pl", "js", "mjs", "cjs", "ts", "php", "lua", "ps1", "r",
];

/// The extension of the last path segment, lowercase; `None` without one.
/// A leading dot (`.bashrc`) is a name, not an extension.
pub(super) fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Whether a file may keep its executable bit (`SPEC.md` §12.5.3): it is
/// text, and it starts with a shebang (`#!`) or its name has a script
/// extension. Decided on the bytes, so a binary named `run.sh` is not one.
pub fn is_text_script(path: &str, bytes: &[u8]) -> bool {
    is_text(bytes)
        && (bytes.starts_with(b"#!")
            || extension(path).is_some_and(|ext| SCRIPT_EXTENSIONS.contains(&ext.as_str())))
}

/// The kinds a file named `path` may hold, by its extension; `None` when
/// the extension promises nothing (or there is none).
pub fn expected_kinds(path: &str) -> Option<&'static [ContentKind]> {
    use ContentKind as K;
    const FONT_SFNT: &[ContentKind] = &[K::TrueType, K::OpenType];
    const TEXT: &[ContentKind] = &[K::Text];
    Some(match extension(path)?.as_str() {
        "ttf" | "ttc" | "otf" => FONT_SFNT,
        "woff" => &[K::Woff],
        "woff2" => &[K::Woff2],
        "png" => &[K::Png],
        "jpg" | "jpeg" => &[K::Jpeg],
        "gif" => &[K::Gif],
        "webp" => &[K::WebP],
        // An SVG is text; one without a leading `<svg` element is still text.
        "svg" => &[K::Svg, K::Text],
        "pdf" => &[K::Pdf],
        "gz" | "tgz" => &[K::Gzip],
        "zip" | "jar" | "docx" | "xlsx" | "pptx" | "odt" | "ods" | "odp" | "whl" => &[K::Zip],
        "tar" => &[K::Tar],
        "md" | "markdown" | "txt" | "json" | "yaml" | "yml" | "toml" | "xml" | "xsd" | "xsl" | "xslt"
        | "html" | "htm" | "css" | "csv" | "tsv" | "ini" | "cfg" | "sql" | "rst" | "jsonl" | "go" | "rs"
        | "c" | "h" | "java" | "kt" | "swift" => TEXT,
        ext if SCRIPT_EXTENSIONS.contains(&ext) => TEXT,
        _ => return None,
    })
}

/// A file whose content is not what its extension says: a finding, not a
/// refusal (`SPEC.md` §12.5.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindMismatch {
    /// The extension, lowercase.
    pub extension: String,
    /// What the content is.
    pub found: ContentKind,
}

impl fmt::Display for KindMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "content does not match extension: a .{} file holds {}", self.extension, self.found)
    }
}

/// The mismatch between `path`'s extension and `kind`, if any.
pub fn kind_mismatch(path: &str, kind: ContentKind) -> Option<KindMismatch> {
    let expected = expected_kinds(path)?;
    (!expected.contains(&kind))
        .then(|| KindMismatch { extension: extension(path).unwrap_or_default(), found: kind })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn padded(head: &[u8]) -> Vec<u8> {
        let mut bytes = head.to_vec();
        bytes.resize(512, 0);
        bytes
    }

    #[test]
    fn sniffs_every_magic_number() {
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        let mut webp = b"RIFF\x10\0\0\0WEBPVP8 ".to_vec();
        webp.resize(64, 0);
        let cases: Vec<(Vec<u8>, ContentKind)> = vec![
            (padded(b"\x7fELF\x02\x01\x01"), ContentKind::Elf),
            (padded(b"MZ\x90\0\x03\0"), ContentKind::WindowsExe),
            (padded(b"\xcf\xfa\xed\xfe\x07\0\0\x01"), ContentKind::MachO),
            (padded(b"\xfe\xed\xfa\xce"), ContentKind::MachO),
            (padded(b"\xca\xfe\xba\xbe\0\0\0\x02"), ContentKind::MachO),
            (padded(b"\xca\xfe\xba\xbe\0\0\0\x34"), ContentKind::JavaClass),
            (padded(b"\0asm\x01\0\0\0"), ContentKind::Wasm),
            (padded(b"\x6f\x0d\x0d\x0a\0\0\0\0"), ContentKind::PythonBytecode),
            (padded(b"\x00\x01\x00\x00\x00\x10"), ContentKind::TrueType),
            (padded(b"OTTO\0\x0b"), ContentKind::OpenType),
            (padded(b"wOFF\0\x01"), ContentKind::Woff),
            (padded(b"wOF2\0\x01"), ContentKind::Woff2),
            (padded(b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR"), ContentKind::Png),
            (padded(b"\xff\xd8\xff\xe0\0\x10JFIF"), ContentKind::Jpeg),
            (padded(b"GIF89a\x01\0"), ContentKind::Gif),
            (webp, ContentKind::WebP),
            (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec(), ContentKind::Pdf),
            (padded(b"\x1f\x8b\x08\0"), ContentKind::Gzip),
            (padded(b"PK\x03\x04\x14\0"), ContentKind::Zip),
            (tar, ContentKind::Tar),
            (
                b"<?xml version=\"1.0\"?>\n<!-- logo -->\n<!DOCTYPE svg>\n<svg xmlns=\"x\"/>".to_vec(),
                ContentKind::Svg,
            ),
            (b"# Title\n\nplain text\n".to_vec(), ContentKind::Text),
            (b"MZ is how this text starts\n".to_vec(), ContentKind::Text),
            (b"ab\r\n not bytecode, just text\n".to_vec(), ContentKind::Text),
            (vec![0xff, 0xfe, 0x00, 0x41], ContentKind::Binary),
            (Vec::new(), ContentKind::Text),
        ];
        for (bytes, want) in cases {
            assert_eq!(sniff(&bytes), want, "{:?}", &bytes[..bytes.len().min(12)]);
        }
    }

    #[test]
    fn native_code_and_bytecode_are_named_as_such() {
        for kind in [ContentKind::Elf, ContentKind::WindowsExe, ContentKind::MachO] {
            assert!(kind.is_native_executable() && !kind.is_bytecode(), "{kind}");
        }
        for kind in [ContentKind::PythonBytecode, ContentKind::JavaClass, ContentKind::Wasm] {
            assert!(kind.is_bytecode() && !kind.is_native_executable(), "{kind}");
        }
        for kind in [ContentKind::Text, ContentKind::Pdf, ContentKind::Zip, ContentKind::Binary] {
            assert!(!kind.is_bytecode() && !kind.is_native_executable(), "{kind}");
        }
    }

    #[test]
    fn a_text_script_is_text_with_a_shebang_or_a_script_extension() {
        assert!(is_text_script("scripts/fill.py", b"print(1)\n"));
        assert!(is_text_script("tools/run", b"#!/bin/sh\necho hi\n"));
        assert!(is_text_script("scripts/RUN.SH", b"echo hi\n"));
        assert!(!is_text_script("reference.md", b"# not a script\n"));
        assert!(!is_text_script("tools/run", b"echo hi, but no shebang\n"));
        assert!(!is_text_script("scripts/fill.sh", b"\x7fELF\x02\x01\x01\0\0"));
        assert!(!is_text_script(".sh", b"echo hi\n"), "a dot file has no extension");
    }

    #[test]
    fn a_content_that_differs_from_its_extension_is_a_mismatch() {
        let png = padded(b"\x89PNG\r\n\x1a\n");
        assert_eq!(kind_mismatch("assets/logo.png", sniff(&png)), None);
        let m = kind_mismatch("assets/report.pdf", sniff(&png)).unwrap();
        assert_eq!(m.to_string(), "content does not match extension: a .pdf file holds PNG image");
        assert_eq!(
            kind_mismatch("fonts/A.TTF", sniff(&padded(b"OTTO"))),
            None,
            "an .ttf may hold CFF outlines"
        );
        assert!(kind_mismatch("notes.md", sniff(&padded(b"\x1f\x8b\x08"))).is_some());
        assert_eq!(
            kind_mismatch("data.bin", sniff(&padded(b"\x1f\x8b\x08"))),
            None,
            "no promise, no mismatch"
        );
        assert_eq!(kind_mismatch("Makefile", ContentKind::Binary), None);
        assert_eq!(kind_mismatch("logo.svg", ContentKind::Text), None);
    }
}
