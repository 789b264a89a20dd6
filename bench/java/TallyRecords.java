// Writes the audit benchmark's records fast (kafkajs encodes ~50k records/s on 2 cores; the Java
// client several times that): N records with `tally.*` headers, in blocks of consecutive seqs,
// each block on one partition (round robin), as a publish request would send them. Prints one
// line per block, "firstSeq partition baseOffset", for the ledger the benchmark then writes.
//
//   java -cp <kafka-libs>/*:<classes> TallyRecords <brokers> <topic> <stream> <session> <count>
//        <block> <partitions> <valueBytes>
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class TallyRecords {
  public static void main(String[] args) throws Exception {
    String brokers = args[0], topic = args[1], stream = args[2], session = args[3];
    long count = Long.parseLong(args[4]);
    int block = Integer.parseInt(args[5]);
    int partitions = Integer.parseInt(args[6]);
    byte[] value = new byte[Integer.parseInt(args[7])];
    java.util.Arrays.fill(value, (byte) 'x');
    Properties props = new Properties();
    props.put("bootstrap.servers", brokers);
    props.put("acks", "all");
    props.put("enable.idempotence", "true");
    props.put("linger.ms", "5");
    props.put("batch.size", "262144");
    props.put("key.serializer", ByteArraySerializer.class.getName());
    props.put("value.serializer", ByteArraySerializer.class.getName());
    byte[] streamBytes = stream.getBytes(StandardCharsets.UTF_8);
    byte[] sessionBytes = session.getBytes(StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
      List<Future<RecordMetadata>> firsts = new ArrayList<>();
      for (long first = 1, k = 0; first <= count; first += block, k++) {
        int partition = (int) (k % partitions);
        Future<RecordMetadata> head = null;
        for (long seq = first; seq < first + block && seq <= count; seq++) {
          ProducerRecord<byte[], byte[]> record =
              new ProducerRecord<>(topic, partition, null, value);
          record.headers().add("tally.stream", streamBytes);
          record.headers().add("tally.seq", Long.toString(seq).getBytes(StandardCharsets.UTF_8));
          record.headers().add("tally.session", sessionBytes);
          Future<RecordMetadata> sent = producer.send(record);
          if (head == null) head = sent;
        }
        firsts.add(head);
      }
      producer.flush();
      long first = 1;
      for (Future<RecordMetadata> head : firsts) {
        RecordMetadata meta = head.get();
        out.append(first).append(' ').append(meta.partition()).append(' ').append(meta.offset()).append('\n');
        first += block;
      }
    }
    System.out.print(out);
  }
}
