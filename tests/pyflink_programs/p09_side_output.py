"""A ProcessFunction routing records to a side output by an OutputTag."""
from pyflink.common import Types
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessFunction

errors = OutputTag("errors", Types.STRING())


class Route(ProcessFunction):
    def process_element(self, value, ctx):
        if value.startswith("ERR"):
            yield errors, "error: " + value[4:]
        else:
            yield value.upper()


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
lines = env.from_collection(["ok one", "ERR disk full", "ok two", "ERR no route", "ok three"],
                            type_info=Types.STRING())
main = lines.process(Route(), output_type=Types.STRING())
main.print()
main.get_side_output(errors).print()
env.execute("side output")
