//! Opening the device the examples run on: the one named, or the first mlx5 device.
use mlx5dv::Context;

/// Opens `name`, or the first mlx5 device when None.
pub fn open(name: Option<&str>) -> Result<Context, String> {
    let list = mlx5dv::devices().map_err(|e| e.to_string())?;
    let dev = match name {
        Some(name) => list
            .iter()
            .find(|d| d.name() == name)
            .ok_or(format!("no device named {name}"))?,
        None => list
            .iter()
            .find(|d| d.is_mlx5())
            .ok_or("no mlx5 device: run on a ConnectX-5+ or under scripts/soft-mlx5")?,
    };
    dev.open().map_err(|e| e.to_string())
}
