"""``pyflink.datastream.connectors``: flowc has the file connector
(``connectors.file_system``): the text-line source and the row-format sink."""

from flowc.datastream.connectors.file_system import (
    BucketAssigner,
    DefaultRollingPolicy,
    FileSink,
    FileSource,
    OnCheckpointRollingPolicy,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
)

__all__ = ["BucketAssigner", "DefaultRollingPolicy", "FileSink", "FileSource",
           "OnCheckpointRollingPolicy", "OutputFileConfig", "RollingPolicy", "StreamFormat"]
