"""Episode video: an agent's episode on its grid world drawn from the trace, frame by frame.

``bdi-rl render`` and the world panel's "video" button (``/api/.../render``) both call
:func:`render_episode`, so a figure for a talk needs no screen capture. One frame per position
of the agent (the start, then after each step: ``steps + 1`` frames), with the path so far,
max Q shading and greedy arrows as known at that frame (``readers.world``). GIF by Pillow;
MP4 by the ffmpeg binary the ``imageio-ffmpeg`` wheel ships.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.world import MOVES, WorldError, apply_step, episode_world, q_cells, q_rows
from bdi_rl.store import atomic_write_bytes

#: Output formats by file extension.
FORMATS = ("gif", "mp4")
#: Pixels per cell and for the caption: multiples of 16, so ffmpeg's macro blocks fit exactly.
CELL, CAPTION = 48, 32
MAX_FPS = 60
#: Room for the caption under a small map.
MIN_WIDTH = 224

_TILES = {
    "frozenlake": {"S": "#b8dcb0", "F": "#dceefb", "H": "#2f4050", "G": "#f2c14e"},
    "cliffwalking": {"S": "#b8dcb0", ".": "#eeeeee", "C": "#8c3b2c", "G": "#f2c14e"},
    "taxi": {".": "#f4f1e8", "R": "#f4c7c3", "G": "#c6e8c0", "Y": "#fbeaa5", "B": "#c3d6f4"},
}
_STATION_INK = {"R": "#c0392b", "G": "#27ae60", "Y": "#b7950b", "B": "#2e6fd8"}


def render_episode(index: RunIndex, jid: str, episode: int, fmt: str, fps: float = 4.0) -> bytes:
    """The episode as a GIF or MP4 file's bytes; WorldError naming the field otherwise."""
    return _render(index, jid, episode, fmt, fps)[0]


def _render(index: RunIndex, jid: str, episode: int, fmt: str, fps: float) -> tuple[bytes, int]:
    if fmt not in FORMATS:
        raise WorldError(f"output: unknown extension .{fmt} (say .gif or .mp4)")
    if not 0 < fps <= MAX_FPS:
        raise WorldError(f"fps: must be above 0 and at most {MAX_FPS}")
    payload = episode_world(index, jid, episode)
    if payload.get("joint"):
        raise WorldError(
            "agent: a shared world's joint episode is not rendered as video (the viewer's world panel plays it)"
        )
    if not payload["frames"]:
        raise WorldError(f"episode: {payload['note']}")
    images = draw_frames(index, payload)
    return (_gif(images, fps) if fmt == "gif" else _mp4(images, fps)), len(images)


def write_video(index: RunIndex, jid: str, episode: int, out: Path, fps: float = 4.0) -> int:
    """Render into ``out`` (its extension says the format), atomically: nothing is written
    unless the whole video is. The number of frames."""
    data, frames = _render(index, jid, episode, out.suffix.lower().lstrip("."), fps)
    atomic_write_bytes(out, data)
    return frames


def draw_frames(index: RunIndex, payload: dict[str, Any]) -> list[Image.Image]:
    """One image per frame; Q-values follow the steps from those known at the first frame."""
    world, frames, steps = payload["world"], payload["frames"], payload["steps"]
    names = payload["actions"]
    n_actions = len(names) or 1 + max(s["a"] for s in steps)
    rows = q_rows(index, payload["agent"], frames[0]["position"], n_actions)
    beliefs = payload["beliefs"]
    images = []
    for i, frame in enumerate(frames):
        if i:
            apply_step(rows, steps[i - 1], n_actions)
        q = q_cells(rows, world, frame["cell"])
        images.append(_draw(payload, frame, q, beliefs, [f["cell"] for f in frames[: i + 1]]))
    return images


def _draw(
    payload: dict[str, Any], frame: dict[str, Any], q: dict[str, Any], beliefs: list[dict[str, Any]], path: list[Any]
) -> Image.Image:
    world = payload["world"]
    rows, cols, family = int(world["rows"]), int(world["cols"]), world["family"]
    image = Image.new("RGB", (max(cols * CELL, MIN_WIDTH), rows * CELL + CAPTION), "white")
    pen = ImageDraw.Draw(image, "RGBA")
    font = ImageFont.load_default(size=12)
    big = ImageFont.load_default(size=16)
    tiles = _TILES.get(family, {})
    values = [v for line in q["max"] for v in line if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 0.0)
    for y, line in enumerate(world["map"]):
        for x, letter in enumerate(line):
            box = (x * CELL, y * CELL, (x + 1) * CELL - 1, (y + 1) * CELL - 1)
            pen.rectangle(box, fill=tiles.get(letter, "#eeeeee"), outline="#999999")
            value = q["max"][y][x]
            if value is not None and hi > lo and letter not in "HC":
                pen.rectangle(box, fill=(46, 134, 193, int(150 * (value - lo) / (hi - lo))))
            if letter in _STATION_INK and family == "taxi":
                pen.text((x * CELL + 4, y * CELL + 2), letter, fill=_STATION_INK[letter], font=big)
            elif letter in "HGC" and family != "taxi":
                pen.text((x * CELL + 4, y * CELL + 2), letter, fill="white" if letter in "HC" else "black", font=font)
            greedy = q["greedy"][y][x]
            if greedy is not None:
                _arrow(pen, x, y, payload["actions"][greedy] if greedy < len(payload["actions"]) else "", font)
    for wy, wx in world.get("walls", []):
        pen.line([((wx + 1) * CELL, wy * CELL), ((wx + 1) * CELL, (wy + 1) * CELL)], fill="black", width=4)
    for b in beliefs:
        if b["kind"] == "hazard":
            cx, cy = (b["x"] + 0.5) * CELL, (b["y"] + 0.5) * CELL
            pen.line([(cx - 12, cy - 12), (cx + 12, cy + 12)], fill="#e74c3c", width=3)
            pen.line([(cx - 12, cy + 12), (cx + 12, cy - 12)], fill="#e74c3c", width=3)
        elif b["kind"] == "goal":
            pen.rectangle(_inset(b["x"], b["y"], 3), outline="#27ae60", width=3)
    points = [((c["x"] + 0.5) * CELL, (c["y"] + 0.5) * CELL) for c in path]
    if len(points) > 1:
        pen.line(points, fill=(230, 126, 34, 160), width=3)
    cell = frame["cell"]
    if family == "taxi":
        destination = "RGYB"[cell["destination"]]
        dx, dy = _station(world, destination)
        pen.rectangle(_inset(dx, dy, 6), outline=_STATION_INK[destination], width=3)
        if cell["passenger"] < 4:
            px, py = _station(world, "RGYB"[cell["passenger"]])
            pen.ellipse(_inset(px, py, 16), fill="#8e44ad")
    full = family == "taxi" and cell["passenger"] == 4
    pen.ellipse(_inset(cell["x"], cell["y"], 10), fill="#8e44ad" if full else "#e67e22", outline="black", width=2)
    step = frame["frame"]
    pen.text(
        (6, rows * CELL + 3),
        f"episode {payload['episode']}  step {step}/{len(payload['frames']) - 1}",
        fill="black",
        font=font,
    )
    if frame["action"] is not None:
        done = f"{frame['action']}  r {frame['r']:g}  return {frame['return']:g}"
        pen.text((6, rows * CELL + 17), done, fill="black", font=font)
    return image


def _inset(x: int, y: int, margin: int) -> tuple[int, int, int, int]:
    return (x * CELL + margin, y * CELL + margin, (x + 1) * CELL - margin, (y + 1) * CELL - margin)


def _station(world: dict[str, Any], letter: str) -> tuple[int, int]:
    for y, line in enumerate(world["map"]):
        if letter in line:
            return line.index(letter), y
    return 0, 0


def _arrow(pen: ImageDraw.ImageDraw, x: int, y: int, action: str, font: Any) -> None:
    cx, cy = (x + 0.5) * CELL, (y + 0.5) * CELL
    if action not in MOVES:
        pen.text((cx + 8, cy + 6), action[:1].upper(), fill="#1b4f72", font=font)
        return
    dx, dy = MOVES[action]
    tip = (cx + dx * 16, cy + dy * 16)
    pen.line([(cx - dx * 8, cy - dy * 8), tip], fill="#1b4f72", width=2)
    side = (-dy * 5, dx * 5)
    base = (cx + dx * 9, cy + dy * 9)
    pen.polygon([tip, (base[0] + side[0], base[1] + side[1]), (base[0] - side[0], base[1] - side[1])], fill="#1b4f72")


def _gif(images: list[Image.Image], fps: float) -> bytes:
    out = io.BytesIO()
    # No optimisation: Pillow would merge identical frames and the video would lose steps.
    images[0].save(
        out,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=max(20, round(1000 / fps)),
        loop=0,
        optimize=False,
    )
    return out.getvalue()


def _mp4(images: list[Image.Image], fps: float) -> bytes:
    import imageio_ffmpeg  # the ffmpeg binary ships in its wheel

    size = images[0].size
    with tempfile.TemporaryDirectory(prefix="bdi-rl-render-") as tmp:
        path = Path(tmp) / "episode.mp4"
        writer = imageio_ffmpeg.write_frames(str(path), size, fps=fps, macro_block_size=16, ffmpeg_log_level="error")
        writer.send(None)  # start ffmpeg
        for image in images:
            writer.send(image.tobytes())
        writer.close()
        return path.read_bytes()
