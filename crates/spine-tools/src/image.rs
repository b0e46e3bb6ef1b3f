//! Images for the model: what `Read` returns for an image file and what `--image` attaches
//! to a prompt.
//!
//! An image is PNG, JPEG, GIF or WebP, recognised by its magic bytes ([`sniff`]), whatever
//! the file's extension. A file over [`MAX_IMAGE_FILE_BYTES`] is refused
//! ([`ImageError::TooLarge`]); a file whose bytes do not decode is [`ImageError::Corrupt`].
//! An image whose long side passes [`MAX_LONG_SIDE`] pixels (Anthropic's recommendation), or
//! whose bytes pass [`MAX_ENCODED_BYTES`], is downscaled (aspect ratio kept) and re-encoded:
//! JPEG stays JPEG (quality [`JPEG_QUALITY`]); PNG, GIF (its first frame) and WebP become PNG,
//! or JPEG when the PNG is still over [`MAX_ENCODED_BYTES`]; the long side shrinks further
//! (by a quarter each time) until the bytes fit. An image within the limits is sent byte for
//! byte as it was read.

use std::io::{Cursor, Read};
use std::path::Path;

use base64::Engine;
use image::{DynamicImage, ImageFormat, imageops::FilterType};
use serde_json::{Value, json};
use spine_protocol::message::ImageBlock;
use thiserror::Error;

/// The largest image file read (20 MiB).
pub const MAX_IMAGE_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// The longest side sent, in pixels; larger images are downscaled.
pub const MAX_LONG_SIDE: u32 = 1568;
/// The most image bytes sent (3.75 MB: 5 MB once base64-encoded, the API's limit); larger
/// images are downscaled.
pub const MAX_ENCODED_BYTES: usize = 3_750_000;
/// The JPEG quality of a re-encoded image.
pub const JPEG_QUALITY: u8 = 85;

/// An image format the model APIs take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/gif`.
    Gif,
    /// `image/webp`.
    Webp,
}

impl Kind {
    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Kind::Png => "image/png",
            Kind::Jpeg => "image/jpeg",
            Kind::Gif => "image/gif",
            Kind::Webp => "image/webp",
        }
    }

    fn format(self) -> ImageFormat {
        match self {
            Kind::Png => ImageFormat::Png,
            Kind::Jpeg => ImageFormat::Jpeg,
            Kind::Gif => ImageFormat::Gif,
            Kind::Webp => ImageFormat::WebP,
        }
    }
}

/// The format the first bytes of a file announce, if it is one of the four.
pub fn sniff(head: &[u8]) -> Option<Kind> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Kind::Png)
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Kind::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(Kind::Gif)
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(Kind::Webp)
    } else {
        None
    }
}

/// How many leading bytes [`sniff`] needs.
pub const SNIFF_BYTES: usize = 12;

/// Why an image could not be used.
#[derive(Debug, Error)]
pub enum ImageError {
    /// The file is larger than [`MAX_IMAGE_FILE_BYTES`].
    #[error("the image file is too large: {size} bytes, over the limit of {MAX_IMAGE_FILE_BYTES} bytes (20 MiB)")]
    TooLarge {
        /// The file's size in bytes.
        size: u64,
    },
    /// The bytes are not a PNG, JPEG, GIF or WebP image.
    #[error("not a PNG, JPEG, GIF or WebP image")]
    NotAnImage,
    /// The bytes announce an image but do not decode.
    #[error("the {media_type} image does not decode: {reason}")]
    Corrupt {
        /// The announced media type.
        media_type: &'static str,
        /// The decoder's message.
        reason: String,
    },
    /// Re-encoding a downscaled image failed.
    #[error("the image could not be re-encoded: {0}")]
    Encode(String),
    /// Reading the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// An image ready for the model, and what it was.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedImage {
    /// The image as sent (media type, base64, the sent dimensions).
    pub block: ImageBlock,
    /// The size of the file read, in bytes.
    pub original_size: u64,
    /// The original width in pixels.
    pub original_width: u32,
    /// The original height in pixels.
    pub original_height: u32,
    /// The sent width in pixels.
    pub width: u32,
    /// The sent height in pixels.
    pub height: u32,
    /// The size of the sent bytes (before base64).
    pub sent_bytes: usize,
}

impl PreparedImage {
    /// Whether the image was downscaled.
    pub fn downscaled(&self) -> bool {
        (self.width, self.height) != (self.original_width, self.original_height)
    }

    /// Claude Code's Read response for an image:
    /// `{"type":"image","file":{"base64","type","originalSize","dimensions":{"originalWidth",
    /// "originalHeight","displayWidth","displayHeight"}}}`, plus spine's `filePath`.
    pub fn read_response(&self, file_path: &str) -> Value {
        json!({
            "type": "image",
            "file": {
                "base64": self.block.data,
                "type": self.block.media_type,
                "originalSize": self.original_size,
                "dimensions": {
                    "originalWidth": self.original_width,
                    "originalHeight": self.original_height,
                    "displayWidth": self.width,
                    "displayHeight": self.height,
                },
                "filePath": file_path,
            },
        })
    }
}

/// A size for people: `N KB` (or `N.N MB` from one MiB on).
pub fn human_size(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

/// Reads the image file at `path` (at most [`MAX_IMAGE_FILE_BYTES`]) and prepares it.
pub fn load(path: &Path) -> Result<PreparedImage, ImageError> {
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    read_limited(file, size)
}

/// Reads an opened image file of `size` bytes (refused over [`MAX_IMAGE_FILE_BYTES`], and
/// never more than that read) and prepares it.
pub fn read_limited(file: impl Read, size: u64) -> Result<PreparedImage, ImageError> {
    if size > MAX_IMAGE_FILE_BYTES {
        return Err(ImageError::TooLarge { size });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_IMAGE_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > MAX_IMAGE_FILE_BYTES {
        return Err(ImageError::TooLarge { size: read });
    }
    prepare(bytes)
}

/// Prepares image bytes: checks they decode, downscales when over the limits.
pub fn prepare(bytes: Vec<u8>) -> Result<PreparedImage, ImageError> {
    let kind = sniff(&bytes).ok_or(ImageError::NotAnImage)?;
    let original_size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    let decoded = image::load_from_memory_with_format(&bytes, kind.format())
        .map_err(|e| ImageError::Corrupt { media_type: kind.media_type(), reason: e.to_string() })?;
    let (original_width, original_height) = (decoded.width(), decoded.height());
    let fits = original_width.max(original_height) <= MAX_LONG_SIDE && bytes.len() <= MAX_ENCODED_BYTES;
    let (sent_kind, sent, width, height) =
        if fits { (kind, bytes, original_width, original_height) } else { downscale(&decoded, kind)? };
    let sent_bytes = sent.len();
    let data = base64::engine::general_purpose::STANDARD.encode(&sent);
    Ok(PreparedImage {
        block: ImageBlock { width: Some(width), height: Some(height), ..ImageBlock::new(sent_kind.media_type(), data) },
        original_size,
        original_width,
        original_height,
        width,
        height,
        sent_bytes,
    })
}

/// The image shrunk to at most [`MAX_LONG_SIDE`] on its long side and re-encoded, shrunk
/// further until it fits [`MAX_ENCODED_BYTES`].
fn downscale(image: &DynamicImage, kind: Kind) -> Result<(Kind, Vec<u8>, u32, u32), ImageError> {
    let mut long_side = image.width().max(image.height()).min(MAX_LONG_SIDE);
    loop {
        let resized = image.resize(long_side, long_side, FilterType::Triangle);
        let (kind, bytes) = encode(&resized, kind)?;
        if bytes.len() <= MAX_ENCODED_BYTES || long_side <= 64 {
            return Ok((kind, bytes, resized.width(), resized.height()));
        }
        long_side = long_side * 3 / 4;
    }
}

/// JPEG for a JPEG; PNG for the others, JPEG when that PNG is over [`MAX_ENCODED_BYTES`].
fn encode(image: &DynamicImage, kind: Kind) -> Result<(Kind, Vec<u8>), ImageError> {
    if kind != Kind::Jpeg {
        let mut png = Vec::new();
        image.write_to(&mut Cursor::new(&mut png), ImageFormat::Png).map_err(|e| ImageError::Encode(e.to_string()))?;
        if png.len() <= MAX_ENCODED_BYTES {
            return Ok((Kind::Png, png));
        }
    }
    let mut jpeg = Vec::new();
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, JPEG_QUALITY)
        .encode_image(&rgb)
        .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok((Kind::Jpeg, jpeg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8])
        }));
        let mut bytes = Vec::new();
        image.write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).expect("png");
        bytes
    }

    #[test]
    fn formats_are_recognised_by_magic_bytes() {
        assert_eq!(sniff(&png(1, 1)), Some(Kind::Png));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(Kind::Jpeg));
        assert_eq!(sniff(b"GIF89a...."), Some(Kind::Gif));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(Kind::Webp));
        assert_eq!(sniff(b"hello world"), None);
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVE"), None);
    }

    #[test]
    fn a_small_image_is_sent_byte_for_byte() {
        let bytes = png(20, 10);
        let prepared = prepare(bytes.clone()).expect("prepared");
        assert!(!prepared.downscaled());
        assert_eq!((prepared.width, prepared.height), (20, 10));
        assert_eq!(prepared.block.media_type, "image/png");
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(&prepared.block.data).expect("b64"), bytes);
    }

    #[test]
    fn a_large_image_is_downscaled_to_the_long_side_limit_keeping_its_aspect() {
        let prepared = prepare(png(3136, 1000)).expect("prepared");
        assert!(prepared.downscaled());
        assert_eq!((prepared.original_width, prepared.original_height), (3136, 1000));
        assert_eq!(prepared.width, MAX_LONG_SIDE);
        assert_eq!(prepared.height, 500);
        assert!(prepared.sent_bytes <= MAX_ENCODED_BYTES);
        let sent = base64::engine::general_purpose::STANDARD.decode(&prepared.block.data).expect("b64");
        let back = image::load_from_memory(&sent).expect("decodes");
        assert_eq!((back.width(), back.height()), (MAX_LONG_SIDE, 500));
    }

    #[test]
    fn corrupt_and_oversize_files_are_clear_errors() {
        let mut truncated = png(50, 50);
        truncated.truncate(40);
        let e = prepare(truncated).expect_err("corrupt");
        assert!(matches!(e, ImageError::Corrupt { media_type: "image/png", .. }), "{e}");
        assert!(matches!(prepare(b"plain text".to_vec()), Err(ImageError::NotAnImage)));
        let e = read_limited(std::io::empty(), MAX_IMAGE_FILE_BYTES + 1).expect_err("too large");
        assert_eq!(
            e.to_string(),
            "the image file is too large: 20971521 bytes, over the limit of 20971520 bytes (20 MiB)"
        );
    }
}
