"""What the model sees of a session, with one owner: the ``Conversation``.

``Conversation`` holds the history since the last ``/clear``, the current switch or
compaction point and the usage meter, changed only through its verbs (``switched``,
``compacted``, ``cleared``, ``rewound``, ``meter_for``); ``request()`` is what the backend
gets now. ``record()`` is one typed, versioned ``ConversationRecord`` whose JSON form any
session store keeps, and ``Conversation.restore`` rebuilds the same request from it in
another process.
"""

from toolwire.conversation.core import Conversation
from toolwire.conversation.record import (
    LEGACY_KEYS,
    RECORD_KEY,
    VERSION,
    ConversationRecord,
    Point,
    PointKind,
)

__all__ = [
    "LEGACY_KEYS",
    "RECORD_KEY",
    "VERSION",
    "Conversation",
    "ConversationRecord",
    "Point",
    "PointKind",
]
