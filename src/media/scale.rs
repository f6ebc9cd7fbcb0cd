//! Scaling an image down: decode it (PNG, JPEG, GIF's first frame, WebP), shrink it by
//! averaging the pixels each new pixel covers, and encode it again — as PNG, keeping
//! transparency and sharp text (screenshots), or as JPEG when the source was a JPEG or a PNG
//! would not fit `max_file_size_bytes` — smaller still until its data fits. Only
//! `sneaky-outline` links this: read_file reaches it through `sneaky-outline --scale-image`
//! (`super::scale_elsewhere`).

use std::io::{Cursor, Read};
use std::process::ExitCode;

use serde_json::json;

use super::{fitted, Image, ImageKind, MAX_EDGE, MAX_IMAGE_FILE_BYTES, MAX_PIXELS};
use crate::error::{Error, ErrorKind, Result};

/// JPEG quality of a re-encoded image: photographs look unchanged to a model at it.
const JPEG_QUALITY: u8 = 85;

/// How much smaller each try makes an image whose encoding is still over the limit.
const SHRINK_NUM: u32 = 3;
const SHRINK_DEN: u32 = 4;

/// Decoded pixels: 8 bits a sample, RGB or RGBA.
struct Pixels {
    data: Vec<u8>,
    width: u32,
    height: u32,
    channels: usize,
}

/// `sneaky-outline --scale-image MAX_BYTES`: the image on stdin, its scaled form as an envelope
/// on stdout (`{"ok":true,"result":{"mime_type","width","height","content"}}`, content in
/// base64), or a failure envelope.
pub fn main(args: &[String]) -> ExitCode {
    let outcome = args
        .first()
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| Error::invalid_args("--scale-image takes the largest size in bytes"))
        .and_then(|max_bytes| {
            let mut bytes = Vec::new();
            std::io::stdin()
                .take(MAX_IMAGE_FILE_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io("stdin", e))?;
            if bytes.len() as u64 > MAX_IMAGE_FILE_BYTES {
                return Err(Error::new(
                    ErrorKind::FileTooLarge,
                    format!("the image is over {MAX_IMAGE_FILE_BYTES} bytes"),
                ));
            }
            let kind = ImageKind::sniff(&bytes).ok_or_else(|| {
                Error::new(ErrorKind::BinaryFile, "not a PNG, JPEG, GIF or WebP image")
            })?;
            scale(kind, &bytes, max_bytes)
        })
        .map(|image| {
            json!({
                "mime_type": image.kind.mime_type(),
                "width": image.width,
                "height": image.height,
                "content": super::base64_encode(&image.bytes),
            })
        });
    super::answer(outcome)
}

/// The image scaled to fit [`MAX_EDGE`] and encoded within `max_bytes`.
pub fn scale(kind: ImageKind, bytes: &[u8], max_bytes: u64) -> Result<Image> {
    let (width, height) = kind
        .dimensions(bytes)
        .ok_or_else(|| unreadable(kind, "its header is not one"))?;
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(Error::new(
            ErrorKind::FileTooLarge,
            format!(
                "the {} image is {width}x{height} pixels, over the {MAX_PIXELS} pixels read_file \
                 scales down; make a smaller copy first",
                kind.name()
            ),
        ));
    }
    let pixels = decode(kind, bytes)?;
    let pixels = drop_opaque_alpha(pixels);
    let (w, h) = fitted(pixels.width, pixels.height, MAX_EDGE);
    let mut current = shrink(&pixels, w, h);
    loop {
        let (out_kind, encoded) = encode(&current, kind, max_bytes)?;
        if encoded.len() as u64 <= max_bytes {
            return Ok(Image {
                kind: out_kind,
                bytes: encoded,
                width: current.width,
                height: current.height,
            });
        }
        let long = current.width.max(current.height);
        if long <= 16 {
            return Err(Error::new(
                ErrorKind::FileTooLarge,
                format!(
                    "the {} image does not fit max_file_size_bytes ({max_bytes}) even scaled down",
                    kind.name()
                ),
            ));
        }
        let (w, h) = fitted(
            current.width,
            current.height,
            long * SHRINK_NUM / SHRINK_DEN,
        );
        current = shrink(&current, w, h);
    }
}

fn unreadable(kind: ImageKind, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::BinaryFile,
        format!(
            "it starts as a {} image but cannot be read: {why}",
            kind.name()
        ),
    )
}

fn decode(kind: ImageKind, bytes: &[u8]) -> Result<Pixels> {
    match kind {
        ImageKind::Png => decode_png(bytes),
        ImageKind::Jpeg => decode_jpeg(bytes),
        ImageKind::Gif => decode_gif(bytes),
        ImageKind::WebP => decode_webp(bytes),
    }
    .map_err(|why| unreadable(kind, why))
}

/// Room the decoders may take beyond the pixels: 8 bytes a pixel (16-bit RGBA).
fn decode_limit() -> usize {
    usize::try_from(MAX_PIXELS * 8).unwrap_or(usize::MAX)
}

fn decode_png(bytes: &[u8]) -> std::result::Result<Pixels, String> {
    let limits = png::Limits {
        bytes: decode_limit(),
    };
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), limits);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "too large".to_string())?;
    let mut data = vec![0; size];
    let frame = reader.next_frame(&mut data).map_err(|e| e.to_string())?;
    data.truncate(frame.buffer_size());
    let (width, height) = (frame.width, frame.height);
    let (data, channels) = match frame.color_type {
        png::ColorType::Rgb => (data, 3),
        png::ColorType::Rgba => (data, 4),
        png::ColorType::Grayscale => (data.iter().flat_map(|&g| [g, g, g]).collect(), 3),
        png::ColorType::GrayscaleAlpha => (
            data.chunks_exact(2)
                .flat_map(|ga| [ga[0], ga[0], ga[0], ga[1]])
                .collect(),
            4,
        ),
        png::ColorType::Indexed => return Err("an unexpanded palette".to_string()),
    };
    Ok(Pixels {
        data,
        width,
        height,
        channels,
    })
}

fn decode_jpeg(bytes: &[u8]) -> std::result::Result<Pixels, String> {
    use zune_jpeg::zune_core::{bytestream::ZCursor, colorspace::ColorSpace, options};
    let side = usize::try_from(MAX_PIXELS).unwrap_or(usize::MAX);
    let opts = options::DecoderOptions::default()
        .jpeg_set_out_colorspace(ColorSpace::RGB)
        .set_max_width(side)
        .set_max_height(side);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), opts);
    let data = decoder.decode().map_err(|e| e.to_string())?;
    let (width, height) = decoder.dimensions().ok_or_else(|| "no frame".to_string())?;
    pixels(data, width, height, 3)
}

fn decode_gif(bytes: &[u8]) -> std::result::Result<Pixels, String> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    options.set_memory_limit(gif::MemoryLimit::Bytes(
        std::num::NonZeroU64::new(MAX_PIXELS * 4).ok_or("no memory")?,
    ));
    let mut decoder = options
        .read_info(Cursor::new(bytes))
        .map_err(|e| e.to_string())?;
    let (width, height) = (usize::from(decoder.width()), usize::from(decoder.height()));
    let frame = decoder
        .read_next_frame()
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "no frame".to_string())?;
    // The first frame on the logical screen, transparent around it.
    let mut canvas = vec![0u8; width * height * 4];
    let (left, top) = (usize::from(frame.left), usize::from(frame.top));
    let frame_width = usize::from(frame.width);
    for (row, line) in frame.buffer.chunks_exact(frame_width * 4).enumerate() {
        let y = top + row;
        if y >= height || left >= width {
            continue;
        }
        let n = frame_width.min(width - left) * 4;
        let at = (y * width + left) * 4;
        canvas[at..at + n].copy_from_slice(&line[..n]);
    }
    pixels(canvas, width, height, 4)
}

fn decode_webp(bytes: &[u8]) -> std::result::Result<Pixels, String> {
    let mut decoder =
        image_webp::WebPDecoder::new(Cursor::new(bytes)).map_err(|e| e.to_string())?;
    let (width, height) = decoder.dimensions();
    let channels = if decoder.has_alpha() { 4 } else { 3 };
    let size = decoder
        .output_buffer_size()
        .ok_or_else(|| "too large".to_string())?;
    let mut data = vec![0; size];
    decoder.read_image(&mut data).map_err(|e| e.to_string())?;
    pixels(data, width as usize, height as usize, channels)
}

fn pixels(
    data: Vec<u8>,
    width: usize,
    height: usize,
    channels: usize,
) -> std::result::Result<Pixels, String> {
    if width == 0 || height == 0 || data.len() != width * height * channels {
        return Err("its pixels do not match its size".to_string());
    }
    Ok(Pixels {
        data,
        width: u32::try_from(width).map_err(|e| e.to_string())?,
        height: u32::try_from(height).map_err(|e| e.to_string())?,
        channels,
    })
}

/// RGBA whose every pixel is opaque is RGB (so that it may become a JPEG).
fn drop_opaque_alpha(p: Pixels) -> Pixels {
    if p.channels != 4 || p.data.chunks_exact(4).any(|px| px[3] != 255) {
        return p;
    }
    Pixels {
        data: p
            .data
            .chunks_exact(4)
            .flat_map(|px| [px[0], px[1], px[2]])
            .collect(),
        channels: 3,
        ..p
    }
}

/// The pixels at `width` x `height` (not larger): each new pixel is the mean of the source
/// pixels it covers, colours weighted by their opacity so that transparent pixels do not
/// darken the edges.
fn shrink(p: &Pixels, width: u32, height: u32) -> Pixels {
    if (width, height) == (p.width, p.height) {
        return Pixels {
            data: p.data.clone(),
            ..*p
        };
    }
    let (sw, sh) = (p.width as usize, p.height as usize);
    let (dw, dh) = (width as usize, height as usize);
    let c = p.channels;
    let mut out = vec![0u8; dw * dh * c];
    for y in 0..dh {
        let y0 = y * sh / dh;
        let y1 = ((y + 1) * sh / dh).max(y0 + 1);
        for x in 0..dw {
            let x0 = x * sw / dw;
            let x1 = ((x + 1) * sw / dw).max(x0 + 1);
            let mut sum = [0u64; 4];
            let mut count = 0u64;
            for row in y0..y1 {
                for px in p.data[(row * sw + x0) * c..(row * sw + x1) * c].chunks_exact(c) {
                    let weight = if c == 4 { u64::from(px[3]) } else { 1 };
                    for k in 0..3 {
                        sum[k] += u64::from(px[k]) * weight;
                    }
                    sum[3] += weight;
                    count += 1;
                }
            }
            let at = (y * dw + x) * c;
            for k in 0..3 {
                out[at + k] = (sum[k] + sum[3] / 2)
                    .checked_div(sum[3])
                    .map_or(0, |v| v as u8);
            }
            if c == 4 {
                out[at + 3] = ((sum[3] + count / 2) / count) as u8;
            }
        }
    }
    Pixels {
        data: out,
        width,
        height,
        channels: c,
    }
}

/// PNG, unless the image is opaque and came as a JPEG or its PNG is over `max_bytes`: JPEG.
fn encode(p: &Pixels, source: ImageKind, max_bytes: u64) -> Result<(ImageKind, Vec<u8>)> {
    let opaque = p.channels == 3;
    if !(opaque && source == ImageKind::Jpeg) {
        let png = encode_png(p)?;
        if !opaque || png.len() as u64 <= max_bytes {
            return Ok((ImageKind::Png, png));
        }
    }
    Ok((ImageKind::Jpeg, encode_jpeg(p)?))
}

fn encode_png(p: &Pixels) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, p.width, p.height);
    encoder.set_color(if p.channels == 4 {
        png::ColorType::Rgba
    } else {
        png::ColorType::Rgb
    });
    encoder.set_depth(png::BitDepth::Eight);
    let failed =
        |e: png::EncodingError| Error::new(ErrorKind::Internal, format!("encoding a PNG: {e}"));
    let mut writer = encoder.write_header().map_err(failed)?;
    writer.write_image_data(&p.data).map_err(failed)?;
    writer.finish().map_err(failed)?;
    Ok(out)
}

fn encode_jpeg(p: &Pixels) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let (Ok(width), Ok(height)) = (u16::try_from(p.width), u16::try_from(p.height)) else {
        return Err(Error::new(
            ErrorKind::Internal,
            "a JPEG is at most 65535 px a side",
        ));
    };
    jpeg_encoder::Encoder::new(&mut out, JPEG_QUALITY)
        .encode(&p.data, width, height, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("encoding a JPEG: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rgb(width: u32, height: u32, mut f: impl FnMut(u32, u32) -> [u8; 3]) -> Pixels {
        let mut data = Vec::new();
        for y in 0..height {
            for x in 0..width {
                data.extend_from_slice(&f(x, y));
            }
        }
        Pixels {
            data,
            width,
            height,
            channels: 3,
        }
    }

    #[test]
    fn shrinking_averages_the_covered_pixels() {
        let p = rgb(4, 2, |x, _| if x < 2 { [0, 0, 0] } else { [200, 100, 50] });
        let s = shrink(&p, 2, 1);
        assert_eq!(s.data, vec![0, 0, 0, 200, 100, 50]);
        let half = shrink(&p, 1, 1);
        assert_eq!(half.data, vec![100, 50, 25]);
    }

    #[test]
    fn transparent_pixels_do_not_darken_what_they_are_averaged_with() {
        let p = Pixels {
            data: vec![0, 0, 0, 0, 200, 100, 50, 255],
            width: 2,
            height: 1,
            channels: 4,
        };
        assert_eq!(shrink(&p, 1, 1).data, vec![200, 100, 50, 128]);
    }

    #[test]
    fn a_large_png_comes_back_scaled_and_decodable() {
        let p = rgb(3000, 1000, |x, y| [(x % 256) as u8, (y % 256) as u8, 7]);
        let png = encode_png(&p).expect("encode");
        let scaled = scale(ImageKind::Png, &png, 1 << 20).expect("scale");
        assert_eq!((scaled.width, scaled.height), (2000, 667));
        let kind = ImageKind::sniff(&scaled.bytes).expect("an image");
        assert_eq!(kind, scaled.kind);
        assert_eq!(kind.dimensions(&scaled.bytes), Some((2000, 667)));
    }

    #[test]
    fn an_image_over_the_byte_limit_is_made_smaller_until_it_fits() {
        // Noise compresses badly in either format.
        let mut seed = 1u32;
        let p = rgb(800, 600, |_, _| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let b = seed.to_le_bytes();
            [b[1], b[2], b[3]]
        });
        let png = encode_png(&p).expect("encode");
        let scaled = scale(ImageKind::Png, &png, 100_000).expect("scale");
        assert!(scaled.bytes.len() <= 100_000);
        assert_eq!(
            scaled.kind,
            ImageKind::Jpeg,
            "opaque noise: JPEG is smaller"
        );
        assert!(scaled.width < 800 && scaled.height < 600);
        assert_eq!(
            scaled.kind.dimensions(&scaled.bytes),
            Some((scaled.width, scaled.height))
        );
    }

    #[test]
    fn broken_images_are_binary_files_not_panics() {
        let mut png = encode_png(&rgb(10, 10, |_, _| [1, 2, 3])).expect("encode");
        png.truncate(40);
        let e = scale(ImageKind::Png, &png, 1 << 20).expect_err("truncated");
        assert_eq!(e.code(), "binary_file");
        let e = scale(
            ImageKind::Jpeg,
            b"\xff\xd8\xff\xc0\x00\x0b\x08\x00\x10\x00\x10",
            1 << 20,
        )
        .expect_err("no scan");
        assert_eq!(e.code(), "binary_file");
    }
}
