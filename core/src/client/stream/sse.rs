//! Server-sent events (the `text/event-stream` framing both providers stream in), read
//! incrementally from body pieces: `data:` lines joined per event, an empty line ending the
//! event, comments and other fields skipped. Lines and events are bounded, so a server that
//! never ends a line cannot grow memory.

use crate::error::{Error, Result};

/// Longest line kept (a provider's event is one JSON object on one `data:` line).
const MAX_LINE: usize = 4 * 1024 * 1024;
/// Longest event (its `data:` lines together).
const MAX_EVENT: usize = 8 * 1024 * 1024;

/// Splits a body into events' data.
#[derive(Default)]
pub(crate) struct SseReader {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    /// The last byte seen was a CR (its LF, if any, belongs to the same line end).
    after_cr: bool,
}

impl SseReader {
    /// Feeds `bytes`; calls `event` with the data of each event completed by them.
    pub fn feed(&mut self, mut bytes: &[u8], event: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        loop {
            // A CR's LF may come at the start of the next piece.
            if self.after_cr && !bytes.is_empty() {
                self.after_cr = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                }
            }
            let Some(at) = memchr::memchr2(b'\n', b'\r', bytes) else { break };
            self.line_ended(&bytes[..at], event)?;
            self.after_cr = bytes[at] == b'\r';
            bytes = &bytes[at + 1..];
        }
        self.fits(bytes)?;
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// The line so far plus `more` is within the bound.
    fn fits(&self, more: &[u8]) -> Result<()> {
        if self.line.len() + more.len() > MAX_LINE {
            return Err(Error::protocol("stream line too long"));
        }
        Ok(())
    }

    /// The body ended: an event not closed by an empty line still counts.
    pub fn finish(&mut self, event: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        if !self.line.is_empty() {
            self.line_ended(&[], event)?;
        }
        self.dispatch(event)
    }

    /// A line end follows `last`; a line read whole in one piece is not copied.
    fn line_ended(&mut self, last: &[u8], event: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        self.fits(last)?;
        if self.line.is_empty() {
            return self.end_line(last, event);
        }
        self.line.extend_from_slice(last);
        let line = std::mem::take(&mut self.line);
        let ended = self.end_line(&line, event);
        self.line = line;
        self.line.clear();
        ended
    }

    fn end_line(&mut self, line: &[u8], event: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        if line.is_empty() {
            return self.dispatch(event);
        }
        let text = std::str::from_utf8(line).map_err(|_| Error::protocol("stream line is not UTF-8"))?;
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text, ""),
        };
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            if self.data.len() + value.len() > MAX_EVENT {
                return Err(Error::protocol("stream event too large"));
            }
            self.data.push_str(value);
            self.has_data = true;
        }
        Ok(())
    }

    fn dispatch(&mut self, event: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        if !self.has_data {
            return Ok(());
        }
        self.has_data = false;
        let sent = event(&self.data);
        self.data.clear();
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(pieces: &[&[u8]]) -> Vec<String> {
        let mut r = SseReader::default();
        let mut out = Vec::new();
        for p in pieces {
            r.feed(p, &mut |d| {
                out.push(d.to_string());
                Ok(())
            })
            .unwrap();
        }
        r.finish(&mut |d| {
            out.push(d.to_string());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn events_survive_any_split_and_any_line_end() {
        let whole =
            b"event: a\r\ndata: {\"x\":1}\r\n\r\n: comment\n\ndata:two\ndata: lines\n\nid: 3\rdata: cr\r\rdata: [DONE]";
        let want = ["{\"x\":1}", "two\nlines", "cr", "[DONE]"];
        assert_eq!(events(&[whole]), want);
        for cut in 1..whole.len() {
            let (a, b) = whole.split_at(cut);
            assert_eq!(events(&[a, b]), want, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(events(&bytes), want, "a byte at a time");
    }

    #[test]
    #[cfg_attr(miri, ignore)] // 4 MiB fed a byte at a time: minutes when interpreted
    fn bounds_and_encoding_are_errors() {
        let mut r = SseReader::default();
        let long = vec![b'x'; MAX_LINE + 1];
        assert!(r.feed(&long, &mut |_| Ok(())).is_err());
        let mut ended = long.clone();
        ended.push(b'\n');
        let mut r = SseReader::default();
        assert!(r.feed(&ended, &mut |_| Ok(())).is_err(), "a long line read whole");
        let mut r = SseReader::default();
        let fits = [b"data: ".as_slice(), &vec![b'x'; MAX_LINE - 6], b"\n\n"].concat();
        let mut got = 0;
        r.feed(&fits[..10], &mut |_| Ok(())).unwrap();
        r.feed(&fits[10..], &mut |d| {
            got = d.len();
            Ok(())
        })
        .unwrap();
        assert_eq!(got, MAX_LINE - 6, "a line of the longest length is kept");
        let mut r = SseReader::default();
        assert!(r.feed(b"data: \xff\n\n", &mut |_| Ok(())).is_err());
    }
}
