// flowc's extended Flink oracle: FlinkOracle (shared/tools/flink-oracle) plus
//  - "mode": "BATCH" with Flink's static (Default) scheduler, which is what flowc's BATCH mode
//    reproduces (Flink 2.3's default for BATCH is the adaptive batch scheduler);
//  - ops "co_map" (a.connect(b).map), "keyed_co_process" (a.connect(b).keyBy(k, k).process),
//    "side" (getSideOutput of an operator, virtual like union: takes no settings);
//  - partition "custom" (partitionCustom(new Part(), new Mod()));
//  - after each JobGraph three lines: per vertex in topological order, "groups" numbers the
//    vertices' SlotSharingGroup objects and "regions" their logical pipelined regions; per
//    edge line (same order), "datasets" numbers the IntermediateDataSets the edges read; all
//    numbered by first appearance;
//  - op "print": print().name(id), as in FlinkOracle;
//  - op "file_sink": like "sink", but sinkTo(FileSink.forRowFormat(...).build()), a sink with a
//    committer (SupportsCommitter), which Flink expands into "<id>: Writer" and "<id>: Committer";
//  - with --plan first, env.getExecutionPlan() instead of the JobGraph.
// Builds a DataStream program from a JSON pipeline spec with real Apache Flink and prints
// the JobGraph that Flink's own generator makes of it. Reads spec files named on the command
// line. See regenerate_ext.sh.
//
// Spec: {"parallelism": P, "max_parallelism": M?, "chaining": true, "mode": "STREAMING"|"BATCH",
//        "nodes": [{"id": "n1", "op": "source"|"map"|"filter"|"flat_map"|"reduce"|"window_reduce"
//                   |"process"|"union"|"sink", "inputs": ["n0", ...],
//                   "partition": null|"forward"|"rebalance"|"rescale"|"shuffle"|"broadcast"|"global"|"hash",
//                   "parallelism": p?, "slot_group": "g"?, "chain": "default"|"disable"|"new_chain"}]}
// "partition" applies to the (single) input edge; "hash" means keyBy before a keyed op.
import java.io.File;
import java.time.Duration;
import java.util.*;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.*;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.jobgraph.*;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.streaming.api.datastream.*;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.co.CoMapFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.util.OutputTag;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.Collector;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

public class ExtOracle {
    public static class Inc implements MapFunction<Long, Long> { public Long map(Long v) { return v + 1; } }
    public static class Even implements FilterFunction<Long> { public boolean filter(Long v) { return v % 2 == 0; } }
    public static class Twice implements FlatMapFunction<Long, Long> {
        public void flatMap(Long v, Collector<Long> out) { out.collect(v); out.collect(v); } }
    public static class Mod implements KeySelector<Long, Long> { public Long getKey(Long v) { return v % 7; } }
    public static class Sum implements ReduceFunction<Long> { public Long reduce(Long a, Long b) { return a + b; } }
    public static class Proc extends KeyedProcessFunction<Long, Long, Long> {
        public void processElement(Long v, Context c, Collector<Long> out) { out.collect(v); } }

    public static class CoM implements CoMapFunction<Long, Long, Long> {
        public Long map1(Long v) { return v; }
        public Long map2(Long v) { return -v; } }
    public static class CoProc extends KeyedCoProcessFunction<Long, Long, Long, Long> {
        public void processElement1(Long v, Context c, Collector<Long> out) { out.collect(v); }
        public void processElement2(Long v, Context c, Collector<Long> out) { out.collect(v); } }
    public static class Part implements Partitioner<Long> {
        public int partition(Long k, int n) { return (int) (k % n); } }

    static boolean plan = false;  // --plan: print env.getExecutionPlan() instead

    public static void main(String[] args) throws Exception {
        ObjectMapper om = new ObjectMapper();
        if (args.length > 0 && args[0].equals("--plan")) {
            plan = true;
            args = Arrays.copyOfRange(args, 1, args.length);
        }
        for (String path : args) {
            System.out.println("# " + path);
            try {
                describe(om.readTree(new File(path)));
            } catch (Exception e) {
                Throwable t = e;
                while (t.getCause() != null) t = t.getCause();
                System.out.println("error " + t.getClass().getSimpleName() + ": " + t.getMessage());
            }
        }
    }

    static void describe(JsonNode spec) throws Exception {
        org.apache.flink.configuration.Configuration conf = new org.apache.flink.configuration.Configuration();
        if (spec.path("mode").asText("STREAMING").equals("BATCH")) {
            conf.setString("execution.runtime-mode", "BATCH");
            conf.setString("jobmanager.scheduler", "Default");
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(spec.path("parallelism").asInt(1));
        if (spec.has("max_parallelism")) env.setMaxParallelism(spec.get("max_parallelism").asInt());
        if (!spec.path("chaining").asBoolean(true)) env.disableOperatorChaining();
        env.setRuntimeMode(RuntimeExecutionMode.valueOf(spec.path("mode").asText("STREAMING")));
        Map<String, DataStream<Long>> streams = new HashMap<>();
        Map<String, SingleOutputStreamOperator<Long>> operators = new HashMap<>();
        for (JsonNode n : spec.get("nodes")) {
            String id = n.get("id").asText(), op = n.get("op").asText();
            List<DataStream<Long>> ins = new ArrayList<>();
            for (JsonNode i : n.path("inputs")) ins.add(streams.get(i.asText()));
            String part = n.path("partition").isNull() ? null : n.path("partition").asText(null);
            DataStream<Long> in = ins.isEmpty() ? null : partition(ins.get(0), part);
            SingleOutputStreamOperator<Long> out;
            switch (op) {
                case "source":
                    out = env.fromSource(new NumberSequenceSource(0, 1000), WatermarkStrategy.noWatermarks(), id);
                    break;
                case "map": out = in.map(new Inc()); break;
                case "filter": out = in.filter(new Even()); break;
                case "flat_map": out = in.flatMap(new Twice()); break;
                case "reduce": out = in.keyBy(new Mod()).reduce(new Sum()); break;
                case "process": out = in.keyBy(new Mod()).process(new Proc()); break;
                case "window_reduce":
                    out = in.keyBy(new Mod()).window(TumblingEventTimeWindows.of(Duration.ofSeconds(5))).reduce(new Sum());
                    break;
                case "co_map":
                    out = in.connect(partition(ins.get(1), part)).map(new CoM());
                    break;
                case "keyed_co_process":
                    out = in.connect(ins.get(1)).keyBy(new Mod(), new Mod()).process(new CoProc());
                    break;
                case "side":
                    streams.put(id, operators.get(n.get("inputs").get(0).asText())
                        .getSideOutput(new OutputTag<Long>(n.path("tag").asText("side"), Types.LONG)));
                    continue;
                case "union": {
                    DataStream<Long> u = ins.get(0).union(ins.subList(1, ins.size()).toArray(new DataStream[0]));
                    streams.put(id, u);  // union is virtual: no operator, no settings
                    continue;
                }
                case "sink":
                case "print":  // print(): the legacy PrintSinkFunction ("Sink: <name>")
                case "file_sink": {
                    DataStreamSink<Long> s = op.equals("sink") ? in.sinkTo(new DiscardingSink<>()).name(id)
                        : op.equals("print") ? in.print().name(id)
                        : in.sinkTo(FileSink.forRowFormat(new Path(System.getProperty("java.io.tmpdir"), id),
                                                          new SimpleStringEncoder<Long>()).build()).name(id);
                    if (n.path("uid").asBoolean(false)) s.uid(id);
                    if (n.has("parallelism")) s.setParallelism(n.get("parallelism").asInt());
                    if (n.has("slot_group")) s.slotSharingGroup(n.get("slot_group").asText());
                    String ch = n.path("chain").asText("default");
                    if (ch.equals("disable")) s.disableChaining();
                    continue;
                }
                default: throw new IllegalArgumentException("unknown op " + op);
            }
            out.name(id);
            if (n.path("uid").asBoolean(false)) out.uid(id);
            if (n.has("parallelism")) out.setParallelism(n.get("parallelism").asInt());
            if (n.has("slot_group")) out.slotSharingGroup(n.get("slot_group").asText());
            String ch = n.path("chain").asText("default");
            if (ch.equals("disable")) out.disableChaining();
            if (ch.equals("new_chain")) out.startNewChain();
            streams.put(id, out);
            operators.put(id, out);
        }
        if (plan) {
            System.out.println(env.getExecutionPlan());
            return;
        }
        StreamGraph sg = env.getStreamGraph();
        JobGraph jg = sg.getJobGraph();
        Map<Object, Integer> groupIdx = new IdentityHashMap<>();
        StringBuilder groups = new StringBuilder("groups");
        for (JobVertex v : jg.getVerticesSortedTopologicallyFromSources()) {
            Object g = v.getSlotSharingGroup();
            if (!groupIdx.containsKey(g)) groupIdx.put(g, groupIdx.size());
            groups.append(" ").append(groupIdx.get(g));
        }
        Map<JobVertexID, Integer> regionOf = new HashMap<>();
        int ri = 0;
        for (org.apache.flink.runtime.jobgraph.topology.DefaultLogicalPipelinedRegion r :
                org.apache.flink.runtime.jobgraph.topology.DefaultLogicalTopology.fromJobGraph(jg).getAllPipelinedRegions()) {
            for (org.apache.flink.runtime.jobgraph.topology.LogicalVertex lv : r.getVertices()) regionOf.put(lv.getId(), ri);
            ri++;
        }
        Map<Integer, Integer> renum = new HashMap<>();
        StringBuilder regions = new StringBuilder("regions");
        for (JobVertex v : jg.getVerticesSortedTopologicallyFromSources()) {
            int r = regionOf.get(v.getID());
            if (!renum.containsKey(r)) renum.put(r, renum.size());
            regions.append(" ").append(renum.get(r));
        }
        for (JobVertex v : jg.getVerticesSortedTopologicallyFromSources()) {
            System.out.println("vertex " + v.getName() + " | p=" + v.getParallelism()
                + " | maxp=" + v.getMaxParallelism()
                + " | ssg=" + (v.getSlotSharingGroup() == null ? "-" : v.getSlotSharingGroup().getSlotSharingGroupName())
                + " | id=" + v.getID());
            StringBuilder ops = new StringBuilder("operators " + v.getName() + " |");
            for (OperatorIDPair o : v.getOperatorIDs()) ops.append(" ").append(o.getGeneratedOperatorID());
            System.out.println(ops);
            for (JobEdge e : v.getInputs()) {
                System.out.println("edge " + e.getSource().getProducer().getName() + " => " + v.getName()
                    + " | " + e.getDistributionPattern() + " | " + e.getSource().getResultType()
                    + " | " + e.getShipStrategyName());
            }
        }
        System.out.println(groups);
        System.out.println(regions);
        Map<Object, Integer> dsIdx = new IdentityHashMap<>();
        StringBuilder datasets = new StringBuilder("datasets");
        for (JobVertex v : jg.getVerticesSortedTopologicallyFromSources()) {
            for (JobEdge e : v.getInputs()) {
                if (!dsIdx.containsKey(e.getSource())) dsIdx.put(e.getSource(), dsIdx.size());
                datasets.append(" ").append(dsIdx.get(e.getSource()));
            }
        }
        System.out.println(datasets);
    }

    static DataStream<Long> partition(DataStream<Long> s, String p) {
        if (p == null) return s;
        switch (p) {
            case "forward": return s.forward();
            case "rebalance": return s.rebalance();
            case "rescale": return s.rescale();
            case "shuffle": return s.shuffle();
            case "broadcast": return s.broadcast();
            case "global": return s.global();
            case "hash": return s;  // keyed ops key the stream themselves
            case "custom": return s.partitionCustom(new Part(), new Mod());
            default: throw new IllegalArgumentException("unknown partition " + p);
        }
    }
}
