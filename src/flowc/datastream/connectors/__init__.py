"""``pyflink.datastream.connectors``: flowc has the file connector's source
(``connectors.file_system``)."""

from flowc.datastream.connectors.file_system import FileSource, StreamFormat

__all__ = ["FileSource", "StreamFormat"]
