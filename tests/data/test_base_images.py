

def test_a_pytorch_image_between_two_read_releases_of_different_pythons() -> None:
    from wheeldoc.data.base_images import base_image

    img = base_image("pytorch/pytorch:2.3.0-cuda12.1-cudnn8-devel")  # 2.2.2: 3.10, 2.4.0: 3.11
    assert img is not None and img.python is None and img.pythons == ("3.10", "3.11")
    assert base_image("pytorch/pytorch:2.2.2-cuda12.1-cudnn8-devel").pythons == ()
