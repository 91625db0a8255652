"""Episode video: an agent's episode on its grid world drawn from the trace, frame by frame.

``bdi-rl render`` and the world panel's "video" button (``/api/.../render``) both call
:func:`render_episode`, so a figure for a talk needs no screen capture. One frame per position
of the agent (the start, then after each step: ``steps + 1`` frames), with the path so far,
max Q shading and greedy arrows as known at that frame (``readers.world``). A shared grid
world's joint episode (its world agent's, ``readers.world.joint_world``, as the world panel
plays it): one frame per joint step, every agent where that step left it, in the panel's
colours, with its trail, and the food left. GIF by Pillow; MP4 by the ffmpeg binary the
``imageio-ffmpeg`` wheel ships.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.world import WorldError, apply_step, episode_world, q_cells, q_rows
from bdi_rl.rl.families import MOVES, TAXI_STATIONS, family_named
from bdi_rl.store import atomic_write_bytes

#: Output formats by file extension.
FORMATS = ("gif", "mp4")
#: Pixels per cell and for the caption (a joint step's has a line more: each agent's action):
#: multiples of 16, so ffmpeg's macro blocks fit exactly.
CELL, CAPTION, JOINT_CAPTION = 48, 32, 48
MAX_FPS = 60
#: Room for the caption under a small map.
MIN_WIDTH = 224

#: Tile colours by map letter, per family name (a map's ``family``).
_TILES = {
    "frozenlake": {"S": "#b8dcb0", "F": "#dceefb", "H": "#2f4050", "G": "#f2c14e"},
    "cliffwalking": {"S": "#b8dcb0", ".": "#eeeeee", "C": "#8c3b2c", "G": "#f2c14e"},
    "taxi": {".": "#f4f1e8", "R": "#f4c7c3", "G": "#c6e8c0", "Y": "#fbeaa5", "B": "#c3d6f4"},
}
_STATION_INK = {"R": "#c0392b", "G": "#27ae60", "Y": "#b7950b", "B": "#2e6fd8"}
#: Each seat's colour in a joint episode, in seat order: the world panel's (``JOINT_INK`` in
#: static/world.js; a test holds the two equal), so the video matches what the page shows.
JOINT_INK = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
_FOOD_INK = "#8c8c00"


def render_episode(index: RunIndex, jid: str, episode: int, fmt: str, fps: float = 4.0) -> bytes:
    """The episode as a GIF or MP4 file's bytes; WorldError naming the field otherwise."""
    return _render(index, jid, episode, fmt, fps)[0]


def _render(index: RunIndex, jid: str, episode: int, fmt: str, fps: float) -> tuple[bytes, int]:
    if fmt not in FORMATS:
        raise WorldError(f"output: unknown extension .{fmt} (say .gif or .mp4)")
    if not 0 < fps <= MAX_FPS:
        raise WorldError(f"fps: must be above 0 and at most {MAX_FPS}")
    payload = episode_world(index, jid, episode)  # WorldError for a world without a map
    if not payload["frames"]:
        raise WorldError(f"episode: {payload['note']}")
    images = draw_joint_frames(payload) if payload.get("joint") else draw_frames(index, payload)
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
    rows, cols, family = int(world["rows"]), int(world["cols"]), family_named(world["family"])
    image = Image.new("RGB", (max(cols * CELL, MIN_WIDTH), rows * CELL + CAPTION), "white")
    pen = ImageDraw.Draw(image, "RGBA")
    font = ImageFont.load_default(size=12)
    big = ImageFont.load_default(size=16)
    tiles = _TILES.get(family.name, {})
    values = [v for line in q["max"] for v in line if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 0.0)
    for y, line in enumerate(world["map"]):
        for x, letter in enumerate(line):
            box = (x * CELL, y * CELL, (x + 1) * CELL - 1, (y + 1) * CELL - 1)
            pen.rectangle(box, fill=tiles.get(letter, "#eeeeee"), outline="#999999")
            value = q["max"][y][x]
            if value is not None and hi > lo and letter not in family.hazards:
                pen.rectangle(box, fill=(46, 134, 193, int(150 * (value - lo) / (hi - lo))))
            if letter in family.stations:
                pen.text((x * CELL + 4, y * CELL + 2), letter, fill=_STATION_INK[letter], font=big)
            elif letter in family.marks:
                ink = "white" if letter in family.hazards else "black"
                pen.text((x * CELL + 4, y * CELL + 2), letter, fill=ink, font=font)
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
    if "destination" in cell:  # Taxi's: where the passenger is and goes
        destination = TAXI_STATIONS[cell["destination"]]
        dx, dy = _station(world, destination)
        pen.rectangle(_inset(dx, dy, 6), outline=_STATION_INK[destination], width=3)
        if cell["passenger"] < 4:
            px, py = _station(world, TAXI_STATIONS[cell["passenger"]])
            pen.ellipse(_inset(px, py, 16), fill="#8e44ad")
    full = cell.get("passenger") == len(TAXI_STATIONS)  # in the taxi
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


def draw_joint_frames(payload: dict[str, Any]) -> list[Image.Image]:
    """One image per joint step of a shared grid world (``readers.world.joint_world``'s
    frames): every agent where the step left it, with its trail so far, and the food left."""
    world, frames = payload["world"], payload["frames"]
    rows, cols = int(world["rows"]), int(world["cols"])
    font = ImageFont.load_default(size=12)
    captions = [_joint_caption(payload, frame) for frame in frames]
    widest = max(font.getlength(" ".join(text for text, _ in line)) for lines in captions for line in lines)
    width = max(cols * CELL, MIN_WIDTH, -(-int(widest + 12) // 16) * 16)  # whole macro blocks
    trails: list[list[tuple[float, float]]] = [[] for _ in payload["seats"]]
    images = []
    for frame, caption in zip(frames, captions, strict=True):
        image = Image.new("RGB", (width, rows * CELL + JOINT_CAPTION), "white")
        pen = ImageDraw.Draw(image, "RGBA")
        tiles = _TILES.get(world["family"], {})
        for y, line in enumerate(world["map"]):
            for x, letter in enumerate(line):
                box = (x * CELL, y * CELL, (x + 1) * CELL - 1, (y + 1) * CELL - 1)
                pen.rectangle(box, fill=tiles.get(letter, "#eeeeee"), outline="#999999")
        for x, y, level in frame["items"]:
            pen.rectangle(_inset(x, y, 10), fill=_FOOD_INK)
            pen.text(((x + 0.5) * CELL, (y + 0.5) * CELL), str(level), fill="white", font=font, anchor="mm")
        for i, agent in enumerate(frame["agents"]):
            trails[i].append(((agent["x"] + 0.5) * CELL, (agent["y"] + 0.5) * CELL))
            if len(trails[i]) > 1:
                pen.line(trails[i], fill=JOINT_INK[i % len(JOINT_INK)] + "70", width=3)
        for i, agent in enumerate(frame["agents"]):
            shared = sum(1 for b in frame["agents"][:i] if (b["x"], b["y"]) == (agent["x"], agent["y"]))
            cx, cy = (agent["x"] + 0.5) * CELL + shared * CELL * 0.15, (agent["y"] + 0.5) * CELL  # never hide one
            radius = CELL * 0.28
            pen.ellipse(
                (cx - radius, cy - radius, cx + radius, cy + radius),
                fill=JOINT_INK[i % len(JOINT_INK)],
                outline="black",
                width=2,
            )
            pen.text((cx, cy), str(i + 1), fill="white", font=font, anchor="mm")
        for k, line in enumerate(caption):
            left = 6.0
            for text, ink in line:
                pen.text((left, rows * CELL + 3 + 14 * k), text, fill=ink, font=font)
                left += font.getlength(text + " ")
        images.append(image)
    return images


def _joint_caption(payload: dict[str, Any], frame: dict[str, Any]) -> list[list[tuple[str, str]]]:
    """Three lines of (text, colour) pieces."""
    step = frame["step"]
    acted = payload["steps"][frame["frame"]]["agents"]
    return [
        [(f"episode {payload['episode']}  joint step {step}/{len(payload['frames'])}", "black")],
        [
            (
                f"{i + 1} {a['name']} {a['action']}" + (" (default)" if a["defaulted"] else ""),
                JOINT_INK[i % len(JOINT_INK)],
            )
            for i, a in enumerate(acted)
        ],
        [(f"team reward {frame['r']:g}  return {frame['return']:g}" + ("  done" if frame["done"] else ""), "black")],
    ]


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
