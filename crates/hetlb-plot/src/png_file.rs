//! PNG files of charts: plotters draws into an RGB pixel buffer, [`write`] encodes it with the
//! `png` crate, and [`read_rgb`] decodes a PNG file back into RGB pixels for the layout checks.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

/// A white RGB buffer of `size` pixels, as `BitMapBackend::with_buffer` expects
/// (3 bytes per pixel, rows top to bottom).
pub(crate) fn blank(size: (u32, u32)) -> Vec<u8> {
    vec![255; size.0 as usize * size.1 as usize * 3]
}

/// Writes `pixels` (RGB, `size` pixels, rows top to bottom) to `path` as an 8-bit RGB PNG,
/// compressed at the encoder's default level.
pub(crate) fn write(
    path: &Path,
    size: (u32, u32),
    pixels: &[u8],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut file = BufWriter::new(File::create(path)?);
    let mut encoder = png::Encoder::new(&mut file, size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Each row filtered with whichever filter suits it best: charts (flat colour, thin lines)
    // come out at less than half the size of one filter for every row.
    encoder.set_filter(png::FilterType::Sub);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(pixels)?;
    writer.finish()?;
    // The last buffered bytes: a failure here (a full disk) is reported, not lost in a drop.
    file.flush()?;
    Ok(())
}

/// The PNG file at `path` as `(width, height, rgb)`: 8 bits per channel whatever the file's
/// depth, palette or grey expanded to RGB, alpha dropped. The decoder's default limits refuse a
/// picture too large to hold before its pixels are allocated.
pub(crate) fn read_rgb(path: &Path) -> Result<(u32, u32, Vec<u8>), Box<dyn std::error::Error>> {
    let mut decoder = png::Decoder::new(BufReader::new(File::open(path)?));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info()?;
    let mut buffer = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer)?;
    buffer.truncate(frame.buffer_size());
    let rgb = match frame.color_type {
        png::ColorType::Rgb => buffer,
        png::ColorType::Rgba => buffer
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect(),
        png::ColorType::Grayscale => buffer.iter().flat_map(|&g| [g, g, g]).collect(),
        png::ColorType::GrayscaleAlpha => buffer
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0]])
            .collect(),
        png::ColorType::Indexed => return Err("palette left unexpanded".into()),
    };
    Ok((frame.width, frame.height, rgb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_picture_reads_back_pixel_for_pixel() {
        let path = std::env::temp_dir().join(format!("hetlb-png-{}.png", std::process::id()));
        let size = (5, 3);
        let mut pixels = blank(size);
        pixels[3 * 7..3 * 8].copy_from_slice(&[10, 200, 30]);
        write(&path, size, &pixels).unwrap();
        let (w, h, rgb) = read_rgb(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert_eq!((w, h), size);
        assert_eq!(rgb, pixels);
    }

    #[test]
    fn a_file_that_is_no_png_is_an_error() {
        let path = std::env::temp_dir().join(format!("hetlb-nopng-{}.png", std::process::id()));
        std::fs::write(&path, b"not a picture").unwrap();
        let read = read_rgb(&path);
        std::fs::remove_file(&path).ok();
        assert!(read.is_err());
    }
}
