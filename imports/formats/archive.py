"""Export zips (ChatGPT's and Claude's data exports): only `conversations.json` is read, and only from an archive
that holds nothing unexpected. Refused: a member whose name leaves the archive (absolute, `..`, a drive), a link,
an encrypted member, a kind of file no export holds, too many members, members that unpack to more than
IMPORT_MAX_UNPACKED_BYTES in all or that are packed like a zip bomb; and a `conversations.json` that turns out
larger than its header said (read with a bound, never trusting the header)."""

import io
import stat
import zipfile
from pathlib import PurePosixPath

from django.conf import settings

# what ChatGPT and Claude exports hold besides conversations.json: other JSON, the HTML viewer, uploaded files
EXPECTED_SUFFIXES = frozenset({
    ".json", ".html", ".htm", ".txt", ".md", ".csv", ".png", ".jpg", ".jpeg", ".webp", ".gif", ".wav", ".mp3",
    ".m4a", ".mp4", ".webm", ".pdf", ".dat",
})
CONVERSATIONS = "conversations.json"
MAX_RATIO = 200  # unpacked / packed size of one member beyond which it is taken for a zip bomb


class Refused(ValueError):
    """The archive is not one to read (the message says why, naming the member)."""


def is_zip(raw: bytes) -> bool:
    return raw[:4] == b"PK\x03\x04"


def conversations_json(raw: bytes) -> bytes:
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as exc:
        raise Refused(f"The zip archive is damaged ({exc}).") from None
    members = archive.infolist()
    if len(members) > settings.IMPORT_ZIP_MAX_MEMBERS:
        raise Refused(f"The archive holds {len(members):,} files; the most an export may hold is "
                      f"{settings.IMPORT_ZIP_MAX_MEMBERS:,}.")
    total, found = 0, None
    for member in members:
        _check(member)
        total += member.file_size
        if PurePosixPath(member.filename).name == CONVERSATIONS and found is None and not member.is_dir():
            found = member
    if total > settings.IMPORT_MAX_UNPACKED_BYTES:
        raise Refused(f"The archive unpacks to {total:,} bytes; the limit is {settings.IMPORT_MAX_UNPACKED_BYTES:,}.")
    if found is None:
        raise Refused(f"The archive holds no {CONVERSATIONS}.")
    limit = settings.IMPORT_MAX_UNPACKED_BYTES
    try:
        with archive.open(found) as handle:
            data = handle.read(limit + 1)
    except (zipfile.BadZipFile, RuntimeError, OSError, EOFError) as exc:
        raise Refused(f"{found.filename} cannot be read ({exc}).") from None
    if len(data) > limit or len(data) != found.file_size:
        raise Refused(f"{found.filename} is not the size the archive says it is.")
    return data


def _check(member: zipfile.ZipInfo) -> None:
    name = member.filename
    path = PurePosixPath(name)
    if name.startswith(("/", "\\")) or "\\" in name or ".." in path.parts or ":" in name:
        raise Refused(f"The archive member {name!r} has a name that leaves the archive.")
    if member.flag_bits & 0x1:
        raise Refused(f"The archive member {name!r} is encrypted.")
    if stat.S_ISLNK(member.external_attr >> 16):
        raise Refused(f"The archive member {name!r} is a link.")
    if member.is_dir():
        return
    if path.suffix.lower() not in EXPECTED_SUFFIXES:
        raise Refused(f"The archive member {name!r} is not a kind of file an export holds.")
    if member.file_size > MAX_RATIO * max(member.compress_size, 1) and member.file_size > 1024 * 1024:
        raise Refused(f"The archive member {name!r} is packed like a zip bomb.")
