"""Keeping a new Spark driver JVM quiet unless its logs are asked for (issue 28).

`jostle run --engine spark` printed the JVM's start-up lines (log4j's profile, "Setting default
log level", "Your hostname ... resolves to a loopback address", "Unable to load native-hadoop
library") on the terminal. `quiet_jvm_settings` gives the driver and executors a log4j2
configuration of errors only, as they start, and `JOSTLE_SPARK_LOGS=1` keeps Spark's own logging.
"""

from __future__ import annotations

import os
from pathlib import Path

LOGS_VARIABLE = "JOSTLE_SPARK_LOGS"
# Only errors, on stderr: the JVM's start-up lines (log4j's profile, "Setting default log level"
# (printed when the shell's logger, repl.Main or PySpark's gateway, differs from the root's),
# "Your hostname ... resolves to a loopback address", "Unable to load native-hadoop library")
# are warnings and information, printed before `setLogLevel` could run.
_QUIET_LOG4J2 = """status = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
rootLogger.level = error
rootLogger.appenderRef.console.ref = console
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


def spark_logs_wanted() -> bool:
    """Whether the JVM's own log lines were asked for (`JOSTLE_SPARK_LOGS=1`)."""
    return os.environ.get(LOGS_VARIABLE, "").strip() not in ("", "0", "false", "no", "off")


def quiet_jvm_settings() -> dict[str, str]:
    """Spark settings, and the environment, that keep a new driver JVM quiet from its first line
    (issue 28: `jostle run --engine spark` printed log4j's profile, the loopback warning and the
    native-hadoop warning): a log4j2 configuration of errors only, given to the JVM as it starts,
    and SPARK_LOCAL_IP (unless set) so Spark does not look up, and warn about, the host's address.
    Settings the caller passes win; `JOSTLE_SPARK_LOGS=1` keeps Spark's own logging."""
    import tempfile

    folder = Path(tempfile.gettempdir()) / f"jostle-spark-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    folder.mkdir(mode=0o700, exist_ok=True)
    config = folder / "log4j2-quiet.properties"
    if not config.exists() or config.read_text() != _QUIET_LOG4J2:
        config.write_text(_QUIET_LOG4J2)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    option = f"-Dlog4j2.configurationFile=file:{config}"
    return {"spark.driver.extraJavaOptions": option, "spark.executor.extraJavaOptions": option}
