"""data_pipeline, TensorFlow's side: the same pipeline as bench_data.c with tf.data, over the TFRecord file
that tfc_bench wrote into the work folder (tfc's side is prepared first). bench_data.c's header says how both
sides do the same work with the same parallelism."""

import os

from bench_common import Case, NotAvailable

PIPELINE_IMAGES = 4096
PIPELINE_BATCH = 128
PIPELINE_SHUFFLE = 1024
PIPELINE_SIZE = 32
PEAK_EPOCHS = 3  # peak-mem mode, as bench_data.c


def make_dataset(tf, args):
    path = os.path.join(args.work_dir, "data_pipeline.tfrecord")
    if not os.path.exists(path):
        raise NotAvailable(f"{path} is missing (tfc_bench writes it)")
    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}

    def parse(rec):
        f = tf.io.parse_single_example(rec, spec)
        img = tf.io.decode_png(f["image"], channels=1)
        img = tf.image.resize(img, [PIPELINE_SIZE, PIPELINE_SIZE], method="bilinear")
        return img * (1.0 / 255.0), f["label"]

    ds = tf.data.TFRecordDataset([path])
    ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.shuffle(PIPELINE_SHUFFLE, seed=1).batch(PIPELINE_BATCH).prefetch(tf.data.AUTOTUNE)
    # threads = N: the map function runs on a private pool of N threads (AUTOTUNE's parallelism is capped at
    # its size), each op inside it single-threaded
    opts = tf.data.Options()
    opts.threading.private_threadpool_size = args.threads
    opts.threading.max_intra_op_parallelism = 1
    return ds.with_options(opts)


def run_epoch(ds, checksum=False):
    """One epoch; with checksum, the sum of every pixel and label (bench_data.c sums the same)."""
    n, total = 0, 0.0
    for x, y in ds:
        n += int(x.shape[0])
        if checksum:
            total += float(x.numpy().astype("float64").sum()) + float(y.numpy().sum())
    if n != PIPELINE_IMAGES:
        raise RuntimeError(f"data_pipeline: {n} elements, expected {PIPELINE_IMAGES}")
    return total


def tf_pipeline(tf, args):
    ds = make_dataset(tf, args)
    case = Case(None, units=PIPELINE_IMAGES)

    def run(iters):
        for _ in range(iters):
            if case.check != case.check:  # NaN: the first epoch (the warm-up) also sums its output
                case.check = run_epoch(ds, checksum=True)
            else:
                run_epoch(ds)
    case.run = run
    return case


def peak_mem(tf, args):
    """PEAK_EPOCHS epochs in this process (the caller reads the peak RSS)."""
    ds = make_dataset(tf, args)
    for _ in range(PEAK_EPOCHS):
        run_epoch(ds)
