//! Skills as MCP resources, and the skills extension (SEP-2640).
//!
//! Every file of a shown skill is a resource `skill://NAME/PATH`,
//! `skill://NAME/SKILL.md` first; `resources/list` pages through the
//! skills by name ([`PAGE`] skills a page, the cursor the last name). A
//! read serves the file's exact bytes — text as text, anything else
//! base64 — with `_meta` giving its `digest` (`sha256:<hex>`), its `origin`
//! and `untrusted: true`: the bytes are the skill's, and a loader checks
//! them against the manifest, so they are not wrapped as tool results are.
//!
//! `skills/list` and `skills/get` give each skill's entry as the extension
//! describes it: `uri` (its `SKILL.md`), `frontmatter` (`name` and
//! `description`), and `resources`, the manifest — every file's `uri`,
//! `digest` and `size`. The extension's names are stricter than ECP's
//! (lowercase letters, digits, single inner hyphens): a skill whose name
//! is not one is left out of `skills/list` and refused by `skills/get`, and
//! stays a resource and a tool's answer like any other.

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{
    GetSkillResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, MetaObject,
    PaginatedRequestParams, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::json;

use super::ToolError;
use super::view::{self, Shown};
use crate::library::Library;
use ecp_protocol::bundle::SKILL_MD;

/// Skills in one page of `resources/list` or `skills/list`.
pub(super) const PAGE: usize = 100;

/// The name after which a page starts: the request's cursor, or none.
pub(super) fn cursor(request: Option<PaginatedRequestParams>) -> Result<String, ErrorData> {
    let Some(cursor) = request.and_then(|r| r.cursor) else { return Ok(String::new()) };
    view::check_name(&cursor).map_err(|_| {
        ToolError::invalid("invalid_cursor", "cursor: not one this server gave; list again without a cursor")
    })?;
    Ok(cursor)
}

/// The next page's cursor: the last name of a full page.
fn next(names: &[String]) -> Option<String> {
    (names.len() == PAGE).then(|| names.last().cloned()).flatten()
}

/// `_meta` of a skill's file: its digest, origin, and that it is untrusted.
fn meta(shown: &Shown, sha256: &str) -> MetaObject {
    let object = json!({
        "digest": format!("sha256:{sha256}"),
        "origin": shown.packet.origin_instance,
        "confidence": shown.record.confidence,
        "untrusted": true,
    });
    MetaObject(object.as_object().cloned().unwrap_or_default())
}

/// One page of `resources/list`: every file of each shown skill after `after`.
pub(super) fn list(library: &Library, after: &str) -> Result<ListResourcesResult, ToolError> {
    let names = library.store().shown_after(after, PAGE)?;
    let mut resources = Vec::new();
    for name in &names {
        let shown = match view::skill(library, name) {
            Ok(shown) => shown,
            // Gone since the page was read.
            Err(ToolError::NoSuchSkill(_)) => continue,
            Err(e) => return Err(e),
        };
        for file in view::files(&shown) {
            let mime = if file.path == SKILL_MD { "text/markdown" } else { "application/octet-stream" };
            resources.push(
                Resource::new(&file.uri, format!("{name}/{}", file.path))
                    .with_description(shown.packet.skill_description.clone())
                    .with_mime_type(mime)
                    .with_size(file.size)
                    .with_meta(meta(&shown, &file.sha256)),
            );
        }
    }
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = next(&names);
    Ok(result)
}

/// The resource templates: a skill's `SKILL.md`, and any of its files.
pub(super) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new("skill://{name}/SKILL.md", "skill")
            .with_description("A skill's SKILL.md (untrusted text from its origin); names from search_skills")
            .with_mime_type("text/markdown"),
        ResourceTemplate::new("skill://{name}/{+path}", "skill-file")
            .with_description("A file of a skill's folder; paths from list_skill_files or skills/list"),
    ])
}

/// `resources/read`: the bytes of `skill://NAME/PATH`.
pub(super) fn read(library: &Library, uri: &str) -> Result<ReadResourceResult, ToolError> {
    let (name, path) = view::parse_uri(uri)?;
    view::check_path(&path)?;
    let shown = view::skill(library, &name)?;
    let file = view::files(&shown).into_iter().find(|f| f.path == path);
    let file = file.ok_or_else(|| ToolError::NoSuchFile { name: name.clone(), path: path.clone() })?;
    let bytes = view::file_bytes(library, &shown, &path)?;
    let contents = match String::from_utf8(bytes) {
        Ok(text) => {
            let mime = if path == SKILL_MD { "text/markdown" } else { "text/plain" };
            ResourceContents::text(text, uri).with_mime_type(mime)
        }
        Err(binary) => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(binary.as_bytes());
            ResourceContents::blob(encoded, uri).with_mime_type("application/octet-stream")
        }
    };
    Ok(ReadResourceResult::new(vec![contents.with_meta(meta(&shown, &file.sha256))]))
}

/// Whether the skills extension takes `name`: 1–64 lowercase letters and
/// digits, hyphens only between them.
fn extension_name(name: &str) -> bool {
    name.len() <= 64
        && name.split('-').all(|part| {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// A shown skill's entry in the extension's shape.
fn entry(shown: &Shown) -> Skill {
    let files = view::files(shown);
    let manifest =
        files.iter().map(|f| SkillResource::new(&f.uri, format!("sha256:{}", f.sha256), f.size)).collect();
    let frontmatter = SkillFrontmatter::new(&shown.packet.skill_name, &shown.packet.skill_description);
    let meta = json!({
        "origin": shown.packet.origin_instance,
        "confidence": shown.record.confidence,
        "untrusted": true,
    });
    Skill::new(&files[0].uri, frontmatter, SkillResources::Files(manifest))
        .with_meta(MetaObject(meta.as_object().cloned().unwrap_or_default()))
}

/// One page of `skills/list`.
pub(super) fn list_skills(library: &Library, after: &str) -> Result<ListSkillsResult, ToolError> {
    let names = library.store().shown_after(after, PAGE)?;
    let mut skills = Vec::new();
    for name in names.iter().filter(|n| extension_name(n)) {
        match view::skill(library, name) {
            Ok(shown) => skills.push(entry(&shown)),
            Err(ToolError::NoSuchSkill(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let mut result = ListSkillsResult::with_all_items(skills);
    result.next_cursor = next(&names);
    Ok(result)
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is `uri`.
pub(super) fn get_skill(library: &Library, uri: &str) -> Result<GetSkillResult, ToolError> {
    let (name, path) = view::parse_uri(uri)?;
    if path != SKILL_MD {
        return Err(ToolError::invalid("invalid_uri", "uri: a skill is named by its skill://NAME/SKILL.md"));
    }
    if !extension_name(&name) {
        let shown: String = name.chars().take(80).collect();
        return Err(ToolError::invalid(
            "name_outside_extension",
            format!(
                "{shown:?} is not a name the skills extension takes (lowercase letters, digits, inner hyphens); \
                 read it with read_skill or resources/read instead"
            ),
        ));
    }
    Ok(GetSkillResult::new(entry(&view::skill(library, &name)?)))
}
