"""Named Rows through map, key_by on a field and a rolling reduce; printed as +I[...]."""
from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
row_type = Types.ROW_NAMED(["city", "temp"], [Types.STRING(), Types.INT()])
readings = env.from_collection([("Oslo", 3), ("Rome", 18), ("Oslo", 5), ("Rome", 21),
                                ("Oslo", -1)])
rows = readings.map(lambda t: Row(city=t[0], temp=t[1]), output_type=row_type)
(rows.key_by(lambda r: r.city, key_type=Types.STRING())
     .reduce(lambda a, b: Row(city=a.city, temp=max(a.temp, b.temp)))
     .map(lambda r: Row(r.city, r.temp * 10), output_type=Types.ROW([Types.STRING(),
                                                                     Types.INT()]))
     .print())
rows.map(lambda r: "{} is {} degrees".format(r["city"], r.temp), output_type=Types.STRING()) \
    .print()
env.execute("rows")
