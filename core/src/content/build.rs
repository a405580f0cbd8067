//! Making a part at the edge: from bytes, from what a host read out of a file-like object or a
//! JS `Blob`, or from a string that is a `data:` URL, an `http(s)://` URL or a filesystem path.
//! A path is read here and never kept; the MIME type comes from the caller, the source's own
//! declaration (a `Blob`'s `type`) or the extension table, never from sniffing. The part type
//! is the caller's (`image`, `file`, `audio` in the Python port) or follows the MIME type (the
//! JS port's `attach`: [`build_part_by_mime`]).

use serde_json::{Map, Value};

use super::{decoded_len, max_part_bytes, part_error, too_large, MEDIA_KINDS, MEDIA_TYPES};
use crate::error::{Error, Result};
use crate::spec_json::Fields;

/// Where a part's content comes from.
pub enum PartSource {
    /// Raw bytes.
    Bytes(Vec<u8>),
    /// What a file-like object read.
    Read {
        /// Its whole content.
        bytes: Vec<u8>,
        /// Its name (a path), if it has one: the MIME type and base name come from it.
        name: Option<String>,
    },
    /// The content of a container that declares its type and may have a name (a JS `Blob` or
    /// `File`): the declared type, when not empty, is the MIME type; else the name's extension.
    Typed {
        /// Its whole content.
        bytes: Vec<u8>,
        /// The type it declares (`""` or `None`: none).
        mime: Option<String>,
        /// Its file name, if it has one.
        name: Option<String>,
    },
    /// A `data:` URL, an `http(s)://` URL, or a path: which one is told by its start.
    Text(String),
    /// A filesystem path, whatever it starts with.
    Path(String),
    /// A `data:` URL (anything else is an error).
    DataUrl(String),
    /// An `http://` or `https://` URL, kept as the part's `url` (anything else is an error).
    Url(String),
}

/// The part type for a MIME type, as the JS, Go and Clojure ports type a part they are given
/// no type for: `image/*` is `image`, `audio/*` is `audio`, anything else is `file`.
pub fn kind_for_mime(mime: &str) -> &'static str {
    if mime.starts_with("image/") {
        "image"
    } else if mime.starts_with("audio/") {
        "audio"
    } else {
        "file"
    }
}

/// How a part is made besides its source: the JS port's `AttachOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartOptions {
    /// The MIME type, over the extension table's (required for bytes).
    pub mime_type: Option<String>,
    /// The part's `name`, over the file's base name.
    pub name: Option<String>,
    /// A size limit in decoded bytes, over the process-wide one.
    pub max_part_bytes: Option<u64>,
}

impl PartOptions {
    /// The options from JSON (`{mimeType?, name?, maxPartBytes?}`, or their snake_case
    /// spelling; `null` for none). An unknown key is an error.
    pub fn from_json(v: &Value) -> Result<PartOptions> {
        if v.is_null() {
            return Ok(PartOptions::default());
        }
        let f = Fields::new("part option", v, &["mime_type", "name", "max_part_bytes"], true)?;
        Ok(PartOptions {
            mime_type: f.string("mime_type")?,
            name: f.string("name")?,
            max_part_bytes: f.count("max_part_bytes")?,
        })
    }
}

/// Standard base64 (RFC 4648 §4, padded).
pub fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The extension of `path` as Python's `splitext` gives it: after the last dot of the last
/// component, unless that dot starts the name; lower-cased.
pub fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem_start = name.len() - name.trim_start_matches('.').len();
    name[stem_start..].rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase())
}

/// The (MIME type, part type) of a media file by its extension.
pub fn media_type(path: &str) -> Option<(&'static str, &'static str)> {
    let ext = extension(path)?;
    MEDIA_TYPES.iter().find(|(e, _, _)| *e == ext).map(|(_, mime, kind)| (*mime, *kind))
}

fn mime_for_path(path: &str) -> Result<&'static str> {
    match extension(path) {
        Some(ext) if !ext.is_empty() => match media_type(path) {
            Some((mime, _)) => Ok(mime),
            None => Err(part_error(format!("unknown file extension \".{ext}\" — pass an explicit mime_type"))),
        },
        _ => Err(part_error("file has no extension — pass an explicit mime_type")),
    }
}

fn check_limit(size: u64, limit: Option<u64>) -> Result<()> {
    match limit.or_else(max_part_bytes) {
        Some(l) if size > l => Err(too_large(size, l)),
        _ => Ok(()),
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Makes a `kind` part (`image`, `file` or `audio`) from `source`. `mime` overrides the
/// extension's type; `name` the file's base name; `limit` the process-wide
/// [`super::set_max_part_bytes`] (decoded bytes, checked here as a fast failure; the client
/// checks every part again when it sends it).
pub fn build_part(
    kind: &str,
    source: PartSource,
    mime: Option<&str>,
    name: Option<&str>,
    limit: Option<u64>,
) -> Result<Value> {
    if !MEDIA_KINDS.contains(&kind) {
        return Err(part_error(format!("unknown content part type \"{kind}\"")));
    }
    build(Some(kind), source, mime, name, limit)
}

/// Makes a part from `source` whose type follows its MIME type ([`kind_for_mime`]), as the JS
/// port's `attach` and `from*` do; otherwise as [`build_part`].
pub fn build_part_by_mime(source: PartSource, opts: &PartOptions) -> Result<Value> {
    build(None, source, opts.mime_type.as_deref(), opts.name.as_deref(), opts.max_part_bytes)
}

/// A media part's MIME type, `data`, `url` and `name`.
type PartFields = (String, Option<String>, Option<String>, Option<String>);

/// The fields of a part made of the `bytes` a container held (a file-like object, a `Blob`):
/// its MIME type is `mime`, else the one it declares, else its file name's (`handle`).
fn contained(
    bytes: &[u8],
    declared: Option<&str>,
    handle: Option<String>,
    mime: Option<&str>,
    name: Option<&str>,
    limit: Option<u64>,
) -> Result<PartFields> {
    let mime = match (mime.or(declared.filter(|m| !m.is_empty())), handle.as_deref()) {
        (Some(m), _) => m.to_string(),
        (None, Some(h)) => mime_for_path(h)?.to_string(),
        (None, None) => return Err(part_error("mime_type is required for a file-like source with no name")),
    };
    check_limit(bytes.len() as u64, limit)?;
    let name = name.map(str::to_string).or_else(|| handle.as_deref().map(|h| base_name(h).to_string()));
    Ok((mime, Some(base64(bytes)), None, name))
}

fn build(
    kind: Option<&str>,
    source: PartSource,
    mime: Option<&str>,
    name: Option<&str>,
    limit: Option<u64>,
) -> Result<Value> {
    let mime = mime.filter(|m| !m.is_empty());
    let name = name.filter(|n| !n.is_empty());
    let source = match source {
        PartSource::Text(s) if s.is_empty() => return Err(part_error("a content part needs a path, bytes, or a URL")),
        PartSource::Text(s) if s.starts_with("data:") => PartSource::DataUrl(s),
        PartSource::Text(s) if s.starts_with("http://") || s.starts_with("https://") => PartSource::Url(s),
        PartSource::Text(s) => PartSource::Path(s),
        other => other,
    };
    let (mime, data, url, name): PartFields = match source {
        PartSource::Read { bytes, name: handle } => contained(&bytes, None, handle, mime, name, limit)?,
        PartSource::Typed { bytes, mime: declared, name: handle } => {
            contained(&bytes, declared.as_deref(), handle, mime, name, limit)?
        }
        PartSource::Bytes(bytes) => {
            let mime = mime.ok_or_else(|| part_error("mime_type is required when building a part from bytes"))?;
            check_limit(bytes.len() as u64, limit)?;
            (mime.to_string(), Some(base64(&bytes)), None, name.map(str::to_string))
        }
        PartSource::DataUrl(s) => {
            let Some(rest) = s.strip_prefix("data:") else {
                return Err(part_error("not a data: URL"));
            };
            let (head, payload) = rest.split_once(',').unwrap_or((rest, ""));
            if payload.is_empty() || !head.contains(";base64") {
                return Err(part_error("only base64 data: URLs are supported"));
            }
            let own = head.split(';').next().unwrap_or("");
            if own.is_empty() {
                return Err(part_error("data: URL carries no mime type"));
            }
            check_limit(decoded_len(payload), limit)?;
            (mime.unwrap_or(own).to_string(), Some(payload.to_string()), None, name.map(str::to_string))
        }
        PartSource::Url(s) => {
            if !(s.starts_with("http://") || s.starts_with("https://")) {
                return Err(part_error("only http:// and https:// URLs are kept as a part's url"));
            }
            let mime = match mime {
                Some(m) => m.to_string(),
                None => mime_for_path(&s)
                    .map_err(|_| {
                        part_error("mime_type is required for a URL whose extension is not in the media table")
                    })?
                    .to_string(),
            };
            (mime, None, Some(s), name.map(str::to_string))
        }
        PartSource::Path(path) | PartSource::Text(path) => {
            if path.is_empty() {
                return Err(part_error("a content part needs a path, bytes, or a URL"));
            }
            // The type is settled before the file is opened: a bad extension is named first.
            let mime = match mime {
                Some(m) => m.to_string(),
                None => mime_for_path(&path)?.to_string(),
            };
            let bytes = std::fs::read(&path).map_err(|e| part_error(format!("cannot read {path}: {e}")))?;
            check_limit(bytes.len() as u64, limit)?;
            let name = name.map(str::to_string).unwrap_or_else(|| base_name(&path).to_string());
            (mime, Some(base64(&bytes)), None, Some(name))
        }
    };
    let kind = kind.unwrap_or_else(|| kind_for_mime(&mime));
    let mut out = Map::new();
    out.insert("type".into(), Value::String(kind.into()));
    out.insert("mimeType".into(), Value::String(mime));
    if let Some(d) = data {
        out.insert("data".into(), Value::String(d));
    }
    if let Some(u) = url {
        out.insert("url".into(), Value::String(u));
    }
    if let Some(n) = name {
        out.insert("name".into(), Value::String(n));
    }
    Ok(Value::Object(out))
}

/// The keys [`build_part_from_json`] reads (camelCase spellings are accepted too).
pub const PART_SPEC_KEYS: [&str; 8] =
    ["type", "source", "path", "url", "file_name", "mime_type", "name", "max_part_bytes"];

/// [`build_part`] from a JSON spec, for hosts that hand over plain data (the C ABI): one of
/// `source` (a path, a `data:` URL or an `http(s)://` URL, told apart by its start, as an
/// `attach` does), `path` (a file, whatever its name starts with) or `url` (a `data:` URL or a
/// URL to keep); else `bytes` are the content, and `file_name` the name of the file they were
/// read from; `type`, `mime_type`, `name` and `max_part_bytes` as [`build_part`] takes them.
/// A spec that is not an object, an unknown or mistyped key, two sources, and a source given
/// with bytes are [`crate::ErrorKind::InvalidArgument`] errors.
pub fn build_part_from_json(spec: &Value, bytes: &[u8]) -> Result<Value> {
    let f = Fields::new("part", spec, &PART_SPEC_KEYS, true)?;
    let file_name = f.string("file_name")?;
    let given = [
        f.string("source")?.map(PartSource::Text),
        f.string("path")?.map(PartSource::Path),
        f.string("url")?.map(|u| if u.starts_with("data:") { PartSource::DataUrl(u) } else { PartSource::Url(u) }),
    ];
    let mut sources = given.into_iter().flatten();
    let source = match (sources.next(), sources.next()) {
        (Some(_), Some(_)) => return Err(Error::invalid("a part has one source: source, path or url")),
        (Some(_), None) if !bytes.is_empty() => {
            return Err(Error::invalid("a part is made from a source or from bytes, not both"))
        }
        (Some(_), None) if file_name.is_some() => {
            return Err(Error::invalid(format!("{} only goes with bytes", f.named("file_name"))))
        }
        (Some(s), None) => s,
        (None, _) => match file_name {
            Some(name) => PartSource::Read { bytes: bytes.to_vec(), name: Some(name) },
            None => PartSource::Bytes(bytes.to_vec()),
        },
    };
    let (mime, name, limit) = (f.string("mime_type")?, f.string("name")?, f.count("max_part_bytes")?);
    match f.string("type")? {
        Some(kind) => build_part(&kind, source, mime.as_deref(), name.as_deref(), limit),
        None => build(None, source, mime.as_deref(), name.as_deref(), limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_pads_as_the_standard_says() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xff, 0xfe, 0x00, 0x01]), "//4AAQ==");
    }

    #[test]
    fn media_types_go_by_extension_as_splitext() {
        assert_eq!(media_type("/a/b.PNG"), Some(("image/png", "image")));
        assert_eq!(media_type("/a/.png"), None);
        assert_eq!(media_type("/a/x.tar.pdf"), Some(("application/pdf", "file")));
        assert_eq!(media_type("/a/notes.txt"), None);
    }

    #[test]
    fn every_source_becomes_a_canonical_part() {
        let b = build_part("image", PartSource::Bytes(b"foo".to_vec()), Some("image/png"), None, None).unwrap();
        assert_eq!(b, json!({"type": "image", "mimeType": "image/png", "data": "Zm9v"}));
        let msg = |r: Result<Value>| r.unwrap_err().message().to_string();
        assert_eq!(
            msg(build_part("image", PartSource::Bytes(vec![1]), None, None, None)),
            "mime_type is required when building a part from bytes"
        );
        let d = build_part("image", PartSource::Text("data:image/gif;base64,Zm9v".into()), None, None, None).unwrap();
        assert_eq!(d, json!({"type": "image", "mimeType": "image/gif", "data": "Zm9v"}));
        assert_eq!(
            msg(build_part("image", PartSource::Text("data:image/png,abc".into()), None, None, None)),
            "only base64 data: URLs are supported"
        );
        let u = build_part("file", PartSource::Text("https://x/y.pdf".into()), None, None, None).unwrap();
        assert_eq!(u, json!({"type": "file", "mimeType": "application/pdf", "url": "https://x/y.pdf"}));
        assert_eq!(
            msg(build_part("image", PartSource::Text("thing.xyz".into()), None, None, None)),
            "unknown file extension \".xyz\" — pass an explicit mime_type"
        );
        let r = PartSource::Read { bytes: b"foo".to_vec(), name: Some("/tmp/a.webp".into()) };
        assert_eq!(build_part("image", r, None, None, None).unwrap()["name"], "a.webp");
        let e = build_part("image", PartSource::Bytes(b"foo".to_vec()), Some("image/png"), None, Some(2));
        assert_eq!(msg(e), "content part is 3 decoded bytes, over the maxPartBytes limit of 2");
    }

    #[test]
    fn a_json_spec_names_what_is_wrong() {
        let build = |spec: Value, bytes: Option<&[u8]>| build_part_from_json(&spec, bytes.unwrap_or_default());
        let msg = |r: Result<Value>| r.unwrap_err().message().to_string();
        assert_eq!(
            build(json!({"mimeType": "image/png", "maxPartBytes": 3}), Some(b"foo")).unwrap(),
            json!({"type": "image", "mimeType": "image/png", "data": "Zm9v"})
        );
        let read = build(json!({"file_name": "/tmp/doc.pdf"}), Some(b"foo")).unwrap();
        assert_eq!(read, json!({"type": "file", "mimeType": "application/pdf", "data": "Zm9v", "name": "doc.pdf"}));
        let typed = build(json!({"type": "image", "source": "https://x/a.pdf"}), None).unwrap();
        assert_eq!(typed["type"], "image");
        assert_eq!(
            msg(build(json!({"source": "a.png"}), Some(b"x"))),
            "a part is made from a source or from bytes, not both"
        );
        assert_eq!(msg(build(json!({}), None)), "mime_type is required when building a part from bytes");
        assert_eq!(
            msg(build(json!({"source": "a.png", "fileName": "b.png"}), None)),
            "part key \"fileName\" only goes with bytes"
        );
        assert_eq!(msg(build(json!({"mime": "image/png"}), Some(b"x"))), "unknown part key \"mime\"");
        assert_eq!(
            msg(build(json!({"mime_type": 1}), Some(b"x"))),
            "part key \"mime_type\" must be a string, got number"
        );
        assert_eq!(msg(build(json!([]), Some(b"x"))), "part must be an object, got array");
        let over = build(json!({"mime_type": "image/png", "max_part_bytes": 2}), Some(b"foo"));
        assert_eq!(over.unwrap_err().kind(), crate::ErrorKind::ContentPart);
    }

    #[test]
    fn a_path_or_a_url_is_taken_for_what_the_host_says_it_is() {
        let build = |spec: Value| build_part_from_json(&spec, &[]);
        let file = std::env::temp_dir().join(format!("tn-part-{}.png", std::process::id()));
        std::fs::write(&file, b"foo").unwrap();
        let read = build(json!({"path": file.display().to_string()})).unwrap();
        assert_eq!(read["data"], "Zm9v");
        let kept = build(json!({"url": "https://x.test/a.png"})).unwrap();
        assert_eq!(kept, json!({"type": "image", "mimeType": "image/png", "url": "https://x.test/a.png"}));
        let data = build(json!({"url": "data:image/png;base64,Zm9v"})).unwrap();
        assert_eq!(data["data"], "Zm9v");
        let not_a_file = build(json!({"path": "https://x.test/a.png"})).unwrap_err();
        assert_eq!(not_a_file.kind(), crate::ErrorKind::ContentPart, "a path is read, never fetched");
        let two = build(json!({"path": "a.png", "url": "https://x.test/a.png"})).unwrap_err();
        assert_eq!(two.message(), "a part has one source: source, path or url");
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn with_no_type_the_mime_types_the_part() {
        let typed = |mime: &str| {
            super::build(None, PartSource::Bytes(vec![1]), Some(mime), None, None).unwrap()["type"].clone()
        };
        assert_eq!(typed("image/heic"), "image");
        assert_eq!(typed("audio/ogg"), "audio");
        assert_eq!(typed("application/pdf"), "file");
        assert_eq!(typed("text/plain"), "file");
        let u = super::build(None, PartSource::Text("https://x/a.mp3".into()), None, None, None).unwrap();
        assert_eq!(u, json!({"type": "audio", "mimeType": "audio/mpeg", "url": "https://x/a.mp3"}));
        assert_eq!(
            build_part("video", PartSource::Bytes(vec![1]), Some("video/mp4"), None, None).unwrap_err().message(),
            "unknown content part type \"video\""
        );
    }
}
