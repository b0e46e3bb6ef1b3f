//! Test images: real PNG files of a given size, and reading back the size of an image a
//! request carried.

use std::io::Cursor;

use base64::Engine;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};

/// A PNG of `width` x `height` pixels (a gradient, so it does not compress to nothing).
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 251) as u8, (y % 241) as u8, ((x * 7 + y * 13) % 256) as u8])
    });
    let mut bytes = Vec::new();
    DynamicImage::ImageRgb8(image).write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).expect("a test PNG");
    bytes
}

/// The standard base64 of some bytes.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The (width, height) of a base64 image, as decoded.
pub fn dimensions_of_base64(data: &str) -> (u32, u32) {
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).expect("base64");
    let image = image::load_from_memory(&bytes).expect("an image");
    (image.width(), image.height())
}
