"""data_pipeline, TensorFlow's side: the same pipeline as bench_data.c with tf.data, over the TFRecord file
that tfc_bench wrote into the work folder (tfc's side is prepared first)."""

import os

from bench_common import Case, NotAvailable

PIPELINE_IMAGES = 4096
PIPELINE_BATCH = 128
PIPELINE_SHUFFLE = 1024
PIPELINE_SIZE = 32


def tf_pipeline(tf, args):
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
    opts = tf.data.Options()
    opts.threading.private_threadpool_size = args.threads
    opts.threading.max_intra_op_parallelism = 1
    ds = ds.with_options(opts)

    def run(iters):
        for _ in range(iters):
            n = 0
            for x, _ in ds:
                n += int(x.shape[0])
            if n != PIPELINE_IMAGES:
                raise RuntimeError(f"data_pipeline: {n} elements, expected {PIPELINE_IMAGES}")
    return Case(run, units=PIPELINE_IMAGES)
