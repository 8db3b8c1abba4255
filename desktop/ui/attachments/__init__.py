"""The attachments room: files and images attached to messages, as the window shows them.

Holds the chips of the files waiting to be sent with a node's next message (and the node's tray of
them: classified, thumbnailed and stored off the GUI thread), the card asking before images go to a
model that cannot see them, the thumbnails and file chips on a sent message (and on a tool result's
images), the image viewer, and the worker jobs they share.

May import the shared plumbing (``images``) and the core; never ``node``, ``transcript`` or any other
room (the node and the transcript use it). Kept off the start-up path: it brings the core's
attachment package, so a node imports it when the first file is attached or shown.
Nothing is re-exported here: import the modules.
"""
