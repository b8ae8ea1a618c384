"""Evaluation of a trained classifier: precision and recall are metrics here, not numeric precision."""

import argparse

import torch
from lightning import Trainer
from torchmetrics.classification import BinaryPrecision, BinaryRecall


def evaluate(model: torch.nn.Module, loader, device: str) -> dict[str, float]:
    precision, recall = BinaryPrecision().to(device), BinaryRecall().to(device)
    model.eval()
    with torch.no_grad():
        for inputs, labels in loader:
            scores = model(inputs.to(device)).sigmoid()
            precision.update(scores, labels.to(device))
            recall.update(scores, labels.to(device))
    return {"precision": precision.compute().item(), "recall": recall.compute().item()}


def split(items: list) -> tuple[list, list]:
    half = len(items) // 2  # the first half trains, the second half validates
    return items[:half], items[half:]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", default="bf16-mixed", help="numeric precision of the run")
    parser.add_argument("--max-epochs", type=int, default=10)
    args = parser.parse_args()
    trainer = Trainer(accelerator="gpu", strategy="ddp", max_epochs=args.max_epochs)  # precision set elsewhere
