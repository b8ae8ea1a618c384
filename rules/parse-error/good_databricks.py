# Databricks notebook source
# MAGIC %md
# MAGIC # Fine-tune with DeepSpeed

# COMMAND ----------

import torch

# COMMAND ----------

!deepspeed --num_gpus 8 train.py --bf16 true
