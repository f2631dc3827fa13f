"""Random screenshots and the processor batch trl builds from them, for the vision-tower tests."""

import numpy as np
from PIL import Image


def screen(seed: int, size=(56, 112)) -> Image.Image:
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    return Image.fromarray(pixels)


def batch_of(processor, images, texts=None):
    """The processor's chat-template batch for one user turn per image (trl's path: images inside the messages)."""
    texts = texts or ["open the app"] * len(images)
    conversations = [
        [{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": text}]}]
        for image, text in zip(images, texts, strict=True)
    ]
    return processor.apply_chat_template(
        conversation=conversations,
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        padding=True,
        return_tensors="pt",
    )
