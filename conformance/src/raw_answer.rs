//! An HTTP/1.1 answer read off a raw socket ([`crate::target::Target::send_streaming`]):
//! status, headers and a body by length, by chunks or to the stream's end.

use reqwest::header::HeaderMap;

/// Parses an HTTP/1.1 answer in `buf`: status, headers, body. `at_end`
/// says the stream is over, so a body without a length ends here.
pub(crate) fn parse_answer(buf: &[u8], at_end: bool) -> Option<(u16, HeaderMap, Vec<u8>)> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut headers = HeaderMap::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes()).ok()?;
        let value = reqwest::header::HeaderValue::from_str(value.trim()).ok()?;
        headers.append(name, value);
    }
    let rest = &buf[end + 4..];
    let chunked = headers
        .get("transfer-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        return match dechunk(rest) {
            Some(body) => Some((status, headers, body)),
            None if at_end => Some((status, headers, rest.to_vec())),
            None => None,
        };
    }
    let length =
        headers.get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok());
    match length {
        Some(n) if rest.len() >= n => Some((status, headers, rest[..n].to_vec())),
        _ if at_end => Some((status, headers, rest.to_vec())),
        _ => None,
    }
}

/// The body of a complete chunked encoding, or `None` while incomplete.
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        if rest.len() < size + 2 {
            return None;
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_chunked_answer_only_when_complete() {
        let full = b"HTTP/1.1 413 Payload Too Large\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n";
        let (status, _, body) = parse_answer(full, false).unwrap();
        assert_eq!((status, body.as_slice()), (413, &b"{\"a\":1}"[..]));
        assert!(parse_answer(&full[..full.len() - 5], false).is_none());
    }

    #[test]
    fn parses_an_answer_by_content_length() {
        let full = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(parse_answer(full, false).unwrap().2, b"{}");
        assert!(parse_answer(&full[..full.len() - 1], false).is_none());
    }
}
