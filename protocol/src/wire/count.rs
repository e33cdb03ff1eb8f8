//! Counting the packets of an update before decoding any: a receiver refuses
//! an update of too many packets (`SPEC.md` §5.6) without first building
//! millions of them (an 8 MiB body of `[{},{},…]` holds 2.8 million).
//!
//! A packet is a JSON object, so an update holds at most as many packets as
//! it has `{` bytes, less one for the update itself: counted with memchr at
//! memory speed, that bound settles almost every update. Only a body with
//! more braces than the limit (skills with code blocks) is read once more,
//! by serde_json without building anything, to count the array exactly.

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// How many packets the `skills` array of `bytes` holds, when that can be
/// more than `max`: `Some(count)` only when it is over `max`. `None` also when
/// the bytes are not an update at all: the decoder says what is wrong then.
pub(super) fn packets_over(bytes: &[u8], max: usize) -> Option<usize> {
    // Every packet takes two bytes at least (`{}`), and one `{` exactly.
    if bytes.len() / 2 <= max || memchr::memchr_iter(b'{', bytes).count().saturating_sub(1) <= max {
        return None;
    }
    let counted: Counted = serde_json::from_slice(bytes).ok()?;
    counted.0.filter(|&n| n > max)
}

/// An update read for the length of its `skills` array alone.
struct Counted(Option<usize>);

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(UpdateVisitor)
    }
}

struct UpdateVisitor;

impl<'de> Visitor<'de> for UpdateVisitor {
    type Value = Counted;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an ECPKnowledgeUpdate object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Counted, A::Error> {
        let mut count = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "skills" {
                count = map.next_value_seed(ArrayLength)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Counted(count))
    }
}

/// The length of an array (or `None` for `null`), its items skipped unread.
struct ArrayLength;

impl<'de> DeserializeSeed<'de> for ArrayLength {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArrayLength {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of packets")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut n = 0usize;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(Some(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update_of(packets: usize, packet: &str) -> Vec<u8> {
        let skills = vec![packet; packets].join(",");
        format!("{{\"peerInstance\":\"p\",\"stats\":{{}},\"skills\":[{skills}]}}").into_bytes()
    }

    #[test]
    fn counts_past_the_limit_only_and_at_the_limit_says_nothing() {
        assert_eq!(packets_over(&update_of(3, "{}"), 3), None, "at the limit");
        assert_eq!(packets_over(&update_of(4, "{}"), 3), Some(4), "one past it");
        assert_eq!(packets_over(&update_of(2_800_000, "{}"), 10_000), Some(2_800_000));
    }

    #[test]
    fn braces_inside_packets_do_not_count_as_packets() {
        let braces = r#"{"skillBody":"fn main() { if x { y } }","tags":[{"a":{}}]}"#;
        assert_eq!(packets_over(&update_of(2, braces), 2), None);
        assert_eq!(packets_over(&update_of(3, braces), 2), Some(3));
    }

    #[test]
    fn what_is_not_an_update_is_left_to_the_decoder() {
        for body in
            [&b"[{},{},{}]"[..], b"{\"skills\":[{},{},{}", b"{\"skills\":null,\"x\":{}}", b"not json {{{{"]
        {
            assert_eq!(packets_over(body, 1), None, "{}", String::from_utf8_lossy(body));
        }
    }
}
